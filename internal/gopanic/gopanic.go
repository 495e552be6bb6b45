// Package gopanic turns a panic in a goroutine a library started into an
// error its caller receives, instead of a process that ends at once.
package gopanic

import (
	"fmt"
	"runtime/debug"
)

// PanicError is a panic recovered in a goroutine a library started (a
// backfill worker, a validation report's document checker): a bug, not
// the data's fault. A panic on the caller's goroutine is the caller's to
// recover (the CLI prints one line and exits 70); one in a goroutine of
// ours would end the process at once, before any cleanup (the leases'
// release) and with a stack trace that can quote document values. The
// library returns it instead, once its other goroutines have stopped.
type PanicError struct {
	Where string // what panicked: "backfill worker 2 of users"
	Value any    // the value given to panic
	Stack []byte // where it was raised
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("internal error in %s: %v", e.Where, e.Value)
}

// RecoverTo, deferred, turns a panic of the goroutine into a *PanicError
// stored in *err.
func RecoverTo(err *error, where string) {
	if p := recover(); p != nil {
		*err = &PanicError{Where: where, Value: p, Stack: debug.Stack()}
	}
}
