package reshape

import (
	"context"
	"fmt"

	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// ErrRunFuncMissing is a `go:` run operation whose function this binary
// does not register ([*RunFuncMissingError] wraps it). It wraps
// version.ErrFuncMissing: a command refuses it as it refuses a func step
// the binary lacks (exit 2).
var ErrRunFuncMissing = fmt.Errorf("run function not registered: %w", version.ErrFuncMissing)

// RunFuncMissingError refuses a migration whose `go:` operation names a
// function the binary lacks, before any of its run operations runs.
type RunFuncMissingError struct {
	File string
	Line int
	Func string
	Down bool
}

func (e *RunFuncMissingError) Error() string {
	what := "run operation"
	if e.Down {
		what = "run operation's down"
	}
	return fmt.Sprintf("%s:%d: the %s `go: %s` is not registered in this mongomig binary; build your own with pkg/command and version.WithRunFunc(%q, fn) and run it; nothing was run",
		migration.DisplayName(e.File), e.Line, what, e.Func, e.Func)
}

func (e *RunFuncMissingError) Unwrap() error { return ErrRunFuncMissing }

// missingRunFunc returns a *RunFuncMissingError for the first `go:`
// operation of m whose function (down's, when down) reg lacks.
func missingRunFunc(m *migration.Migration, reg *version.Registry, down bool) error {
	for _, op := range m.Run {
		name := op.Func
		if down {
			name = op.DownFunc
		}
		if op.Kind != migration.RunGo || name == "" {
			continue
		}
		if _, ok := lookupRunFunc(reg, name); !ok {
			return &RunFuncMissingError{File: m.File, Line: op.Pos.Line, Func: name, Down: down}
		}
	}
	return nil
}

func lookupRunFunc(reg *version.Registry, name string) (version.RunFunc, bool) {
	if reg == nil {
		return nil, false
	}
	return reg.RunFunc(name)
}

// goRun calls the registered function once, with the lock ctx carries.
// Its progress is marked done only after it returned nil: one interrupted
// runs again whole (the function must be idempotent).
func (o *operation) goRun(ctx context.Context, name string) error {
	fn, ok := lookupRunFunc(o.opts.Registry, name)
	if !ok {
		return &RunFuncMissingError{File: o.m.File, Line: o.op.Pos.Line, Func: name}
	}
	o.p.Pass++
	if err := o.save(ctx); err != nil {
		return err
	}
	if err := lease.Fence(ctx); err != nil {
		return err
	}
	if err := fn(ctx, o.db); err != nil {
		return fmt.Errorf("go %s: %w", name, err)
	}
	o.summary = "ran the Go function " + name
	if o.p.Pass > 1 {
		o.summary += fmt.Sprintf(" (run %d: the earlier ones were interrupted)", o.p.Pass)
	}
	return nil
}

// goRevert runs the operation's down function, or says plainly that
// there is none.
func (o *operation) goRevert(ctx context.Context, r *OpResult) error {
	if o.op.DownFunc == "" {
		o.summary = "the Go function " + o.op.Func + " has no down function: what it changed stays"
		r.Unrestorable = fmt.Sprintf("%s:%d: %04d go %s (run operation %d) declares no down: down cannot undo what it changed",
			migration.DisplayName(o.m.File), o.op.Pos.Line, o.m.Version, o.op.Func, o.p.Index+1)
		return nil
	}
	return o.goRun(ctx, o.op.DownFunc)
}

func planGo(file string, op migration.RunOp, reg *version.Registry, p *Planned) {
	p.Summary = "run the Go function " + op.Func
	if _, ok := lookupRunFunc(reg, op.Func); !ok {
		p.Refused = (&RunFuncMissingError{File: file, Line: op.Pos.Line, Func: op.Func}).Error()
	}
}

// CheckRunFuncs returns a *RunFuncMissingError when a `go:` operation of
// m names a function reg lacks (down: its down function), so a command
// can refuse before it changes anything.
func CheckRunFuncs(m *migration.Migration, reg *version.Registry, down bool) error {
	return missingRunFunc(m, reg, down)
}

// GoDownNote is the plan note of reverting `go:` operation op.
func GoDownNote(at string, op migration.RunOp) string {
	if op.DownFunc == "" {
		return fmt.Sprintf("%s: the Go function %s declares no down: down cannot undo what it changed", at, op.Func)
	}
	return fmt.Sprintf("%s: the Go function %s runs", at, op.DownFunc)
}
