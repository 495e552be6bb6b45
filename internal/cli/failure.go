package cli

import (
	"errors"
	"slices"
	"strings"

	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/release"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// failureJSON is what a failing command prints on stdout under --json (one
// object; see docs/cli.md, "Failures under --json"): {"error": failure}.
type failureJSON struct {
	Error failure `json:"error"`
}

// failure is a failed command: what kind of failure, the message (as on
// stderr, one line per error it lists), the exit code, and the data of the
// error that the kind documents.
type failure struct {
	Kind     string         `json:"kind"`
	Message  string         `json:"message"`
	ExitCode int            `json:"exitCode"`
	Details  map[string]any `json:"details"`
}

// describeFailure builds the object for err: the one place that does.
// server is the address the command talks to, as shown (credentials as
// ***), or "" when it has none (lint, create).
func describeFailure(err error, msg, server string) failure {
	kind, details := failureKind(err, server)
	if details == nil {
		details = map[string]any{}
	}
	var withRes *resultError
	if errors.As(err, &withRes) {
		details["result"] = withRes.result
	}
	return failure{Kind: kind, Message: msg, ExitCode: exitCode(err), Details: details}
}

// failureKind names err's kind and gathers its details.
func failureKind(err error, server string) (string, map[string]any) {
	var (
		se       *serverError
		lockErr  *runner.LockTimeoutError
		running  *runner.BackfillRunningError
		lost     *lease.LostError
		drift    *runner.DriftError
		down     *runner.DowngradeError
		order    *runner.OrderError
		invalid  *runner.InvalidFilesError
		unenf    *runner.UnenforceableError
		missing  *version.FuncMissingError
		partial  *runner.PartialError
		intr     *runner.InterruptedError
		pe       *panicError
		notApp   *backfill.NotAppliedError
		upgrade  *version.UpgradeError
		fileErrs migration.ErrorList
	)
	switch {
	case errors.As(err, &pe):
		return "internal", nil
	case errors.As(err, &intr):
		return "interrupted", map[string]any{"direction": intr.Direction, "done": intr.Done, "total": intr.Total}
	case errors.As(err, &se) && se.Auth:
		return "authFailed", map[string]any{"server": se.Server, "mechanism": se.Mechanism}
	case errors.As(err, &se):
		return "unreachable", map[string]any{"server": se.Server}
	case errors.As(err, new(*release.BehindError)):
		var be *release.BehindError
		errors.As(err, &be)
		return "releasesRunning", map[string]any{"collection": be.Collection, "target": be.Target, "releases": be.Releases}
	case errors.As(err, &running):
		return "backfillRunning", lockDetails(running.Lease, map[string]any{"collection": running.Collection})
	case errors.As(err, &lockErr):
		return "lockTimeout", lockDetails(lockErr, nil)
	case errors.Is(err, ErrEmbeddedInUse):
		return "sandboxInUse", nil
	case errors.As(err, &lost):
		d := map[string]any{"lease": lost.Name, "reason": lost.Reason}
		if lost.Reason == lease.LostUnreachable && server != "" {
			d["server"] = server
		}
		return "leaseLost", d
	case errors.As(err, &drift):
		return "drift", map[string]any{"drifted": drift.Drifted}
	case errors.As(err, &down):
		return "downgradeMissing", map[string]any{"file": down.File, "collection": down.Collection, "version": down.Version, "documents": down.Count}
	case errors.Is(err, runner.ErrPartway):
		return "partway", nil
	case errors.As(err, &order):
		return "order", map[string]any{"file": order.File, "pending": order.Pending, "applied": order.Applied}
	case errors.As(err, &invalid):
		rep := lint.Report{Problems: slices.Clone(invalid.Report.Problems)}
		adviseReport(&rep)
		return "invalidFiles", map[string]any{"problems": rep.Problems}
	case errors.As(err, &fileErrs):
		problems := make([]*migration.Error, len(fileErrs))
		for i, fe := range fileErrs {
			c := *fe
			c.Hint = adviseHint(c.Hint)
			problems[i] = &c
		}
		return "invalidFiles", map[string]any{"problems": problems}
	case errors.As(err, &unenf):
		return "unenforceable", map[string]any{"validators": unenf.Validators}
	case errors.As(err, &missing):
		return "funcMissing", map[string]any{"collection": missing.Collection, "file": missing.File, "func": missing.Func, "version": missing.Version, "documents": missing.Documents}
	case errors.Is(err, version.ErrUnknownCollection):
		return "unknownCollection", nil
	case errors.As(err, &notApp):
		return "notApplied", map[string]any{"collection": notApp.Collection, "target": notApp.Target, "applied": notApp.Applied}
	case errors.As(err, &partial):
		return "partial", partialDetails(partial, server)
	case errors.As(err, &upgrade):
		return "documentFailed", map[string]any{"documents": []map[string]any{{"collection": upgrade.Collection, "_id": upgrade.ID, "from": upgrade.From, "file": upgrade.File, "step": upgrade.Step}}}
	case probe.Unreachable(err):
		return "unreachable", map[string]any{"server": server}
	case probe.AuthFailure(err):
		return "authFailed", map[string]any{"server": server}
	}
	switch exitCode(err) {
	case ExitUsage:
		return "usage", nil
	case ExitCheck:
		return "check", nil
	case ExitLock:
		return "lockTimeout", nil
	case ExitInterrupted:
		return "interrupted", nil
	}
	return "failure", nil
}

// lockDetails are a lock timeout's details (added to d): the lease, its
// holder and how long the command waited.
func lockDetails(e *runner.LockTimeoutError, d map[string]any) map[string]any {
	if d == nil {
		d = map[string]any{}
	}
	if e != nil {
		d["lease"] = e.Name
		d["holder"] = e.Holder
		d["waitedMs"] = e.Waited.Milliseconds()
	}
	return d
}

// partialDetails are a migration's that failed part-way: the commands done,
// the one that failed and those not sent.
func partialDetails(p *runner.PartialError, server string) map[string]any {
	d := map[string]any{"version": p.Version, "file": p.File, "direction": p.Direction,
		"done": p.Done, "failed": p.Failed, "notDone": p.NotDone, "sentAfterLeaseLost": p.SentAfterLoss}
	if probe.Unreachable(p.Err) && server != "" {
		d["server"] = server
	}
	return d
}

// writeFailure prints err's object on stdout when --json was given (also
// when the command line failed to parse before the flags were read).
func (e *env) writeFailure(err error, args []string) {
	if !e.g.JSON && !(e.out == nil && jsonTyped(args)) {
		return
	}
	server := ""
	switch {
	case e.g.URI != "":
		server = redactURI(e.g.URI)
	case e.g.Embedded != "":
		server = "--embedded " + e.g.Embedded
	}
	o := &output{out: e.streams.Out}
	_ = o.writeJSON(failureJSON{Error: describeFailure(err, failureMessage(err, e.g.URI), server)})
}

// failureMessage is err's message as stderr shows it, without the escapes
// of names from the files or the database (JSON carries them as they are).
func failureMessage(err error, uri string) string {
	var pe *panicError
	if errors.As(err, &pe) {
		msg, _ := pe.render(uri)
		return msg
	}
	lines := advisedLines(err)
	for i, l := range lines {
		lines[i] = probe.TrimServerInternals(redactErr(l, uri))
	}
	return strings.Join(lines, "\n")
}

// jsonTyped reports whether args hold --json before any "--".
func jsonTyped(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

// resultError is a failure after a command produced a partial result
// (a backfill that stopped on an error): under --json the result goes in
// the failure's details, so stdout holds one object.
type resultError struct {
	err    error
	result any
}

func (e *resultError) Error() string { return e.err.Error() }
func (e *resultError) Unwrap() error { return e.err }
