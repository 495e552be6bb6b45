package runner

import "fmt"

// funcMissing is the refusal, wrapping [ErrFuncMissing], of a command
// (backfill, validate, down...) that would run a func step of coll, named
// fn in file, which this program does not register: what the command
// cannot do without it, and how to get a binary that has it.
func funcMissing(coll, file, fn, command, cannot, nothing string) error {
	return fmt.Errorf("%w: %s: %s declares `func: %s`, which this mongomig binary does not have, so %s %s; build your own with pkg/command and version.WithFunc(%q, ...) (see docs/lazy-upgrades.md), and run its %s; nothing was %s",
		ErrFuncMissing, coll, file, fn, command, cannot, fn, command, nothing)
}

// RefuseMissingFuncs refuses, before anything is read, a command that
// would upgrade the documents of colls up to version upTo ([Latest]: all)
// through a func step this program does not register: it could only list
// every document below that step as failing. verb says what the command
// does to them ("check", "upgrade").
func (r *Runner) RefuseMissingFuncs(colls []string, upTo int64, command, verb string) error {
	for _, c := range colls {
		for _, m := range r.registry.MissingFuncs(c) {
			if m.Version <= upTo {
				return funcMissing(c, m.File, m.Func, command, fmt.Sprintf("cannot %s the documents below version %d", verb, m.Version), "read")
			}
		}
	}
	return nil
}
