// Package testhook lets a test run code (kill its process, let another
// actor go, panic) at named points of a run, in any of the products: a
// test sets a hook for a value (the runner it built), and the product
// looks it up for the value it was given. Nothing but tests sets hooks;
// without one, Get returns nil.
package testhook

import "sync"

// Func runs at a point: its name ("backfill.batch"), a version and a
// counter the point defines.
type Func func(point string, version int64, i int)

var hooks sync.Map

// Set installs fn for key (nil removes it).
func Set(key any, fn Func) {
	if fn == nil {
		hooks.Delete(key)
		return
	}
	hooks.Store(key, fn)
}

// Get returns the hook for key, nil if none.
func Get(key any) Func {
	if fn, ok := hooks.Load(key); ok {
		return fn.(Func)
	}
	return nil
}
