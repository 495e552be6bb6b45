package version

import (
	"fmt"
)

// ErrFuncMissing is a command refused because a step it would run names a
// Go function the program does not register (see [AllowMissingFuncs]):
// [ErrFuncNotRegistered], which an upgrade through such a step returns.
// Refusals wrapping it are [*FuncMissingError]s.
var ErrFuncMissing = ErrFuncNotRegistered

// FuncMissingError names the func step a command would need.
type FuncMissingError struct {
	Collection string
	// File declares the step (with "'s downgrade" for a downgrade's);
	// Version is its migration.
	File    string
	Func    string
	Version int64
	// Downgrade: the step is a downgrade's, which Documents (those at
	// Version or above) need.
	Downgrade bool
	Documents int64
}

func (e *FuncMissingError) Error() string {
	return fmt.Sprintf("%v: %s: %s declares `func: %s`, which this program does not register", ErrFuncMissing, e.Collection, e.File, e.Func)
}

func (e *FuncMissingError) Unwrap() error { return ErrFuncMissing }

// CheckFuncs returns a *FuncMissingError for the first upgrade step of
// colls, in a migration up to upTo, whose func this registry lacks: a
// command upgrading their documents could only list every document below
// it as failing.
func (r *Registry) CheckFuncs(colls []string, upTo int64) error {
	for _, c := range colls {
		for _, m := range r.MissingFuncs(c) {
			if m.Version <= upTo {
				return &FuncMissingError{Collection: c, File: m.File, Func: m.Func, Version: m.Version}
			}
		}
	}
	return nil
}
