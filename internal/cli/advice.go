package cli

import (
	"errors"
	"strings"

	"github.com/mongomig/mongomig/pkg/integrity"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// The libraries' errors and hints say what happened and what is left in
// their own words; the command line's advice (which command to run next,
// with which flags) is added here, the one place that does
// (internal/depcheck's TestLibrariesGiveNoCommandLineAdvice keeps pkg/ free of it).

// advice replaces a library's words (old) with the command line's (new).
type advice struct{ old, new string }

// hintAdvice are the libraries' hints as the command line words them.
var hintAdvice = []advice{
	{migration.HintFromTemplate, "start from the template `mongomig create NAME` writes"},
	{migration.HintSmallerVersion, "use a smaller number, such as the next free one `mongomig create` picks"},
	{migration.HintFileSize, "split it into several migrations, or raise the limit (mongomig --max-file-size)"},
	{lint.HintNoFiles, "migration files are named NNNN_snake_name.yaml; create the first with `mongomig create NAME`"},
	{lint.HintNoCollections, "fill in collections (as `mongomig create`'s template shows; docs/file-format.md) or delete the file; up applies nothing while a pending migration declares nothing"},
}

// adviseHint is a lint problem's hint as the command line words it.
func adviseHint(h string) string {
	for _, a := range hintAdvice {
		if h == a.old {
			return a.new
		}
	}
	return h
}

// adviseReport words the hints of r's problems for the command line.
func adviseReport(r *lint.Report) {
	for i := range r.Problems {
		r.Problems[i].Hint = adviseHint(r.Problems[i].Hint)
	}
}

// advisedLines are err's lines (errorLines) with the command line's advice.
func advisedLines(err error) []string {
	lines := errorLines(err)
	for _, a := range errorAdvice(err) {
		for i, l := range lines {
			if strings.Contains(l, a.old) {
				lines[i] = strings.Replace(l, a.old, a.new, 1)
				break
			}
		}
	}
	for i, l := range lines {
		for _, a := range hintAdvice {
			l = strings.ReplaceAll(l, "; "+a.old, "; "+a.new)
		}
		lines[i] = l
	}
	return lines
}

// adviseIn is s, a message holding err's, with the advice for err.
func adviseIn(s string, err error) string {
	if err == nil {
		return s
	}
	for _, a := range errorAdvice(err) {
		s = strings.Replace(s, a.old, a.new, 1)
	}
	return s
}

// errorAdvice is what the command line adds to the library errors in err.
func errorAdvice(err error) []advice {
	var (
		out     []advice
		drift   *runner.DriftError
		stopped *runner.RevertStoppedError
		partway *runner.PartwayError
		timeout *lease.TimeoutError
		live    *lease.LiveError
		lost    *lease.LostError
	)
	if errors.As(err, &drift) {
		out = append(out, advice{drift.Error(), drift.Message(" (`mongomig create`)", "rerun with --allow-drift")})
	}
	if errors.As(err, &stopped) {
		out = append(out, advice{stopped.Error(), stopped.Message("fix the cause and run `mongomig down` again")})
	}
	if errors.As(err, &partway) {
		out = append(out, advice{partway.Error(), partway.Message("run `mongomig backfill --collection " + partway.Collection + "` to finish them")})
	}
	if errors.As(err, &timeout) {
		force := "mongomig unlock --force"
		if timeout.Name != lease.MigrationLock {
			force += " " + timeout.Name
		}
		out = append(out, advice{timeout.Error(), timeout.Message("run `" + force + "`")})
	}
	if errors.As(err, &live) {
		out = append(out, advice{live.Error(), live.Message("--force")})
	}
	if errors.As(err, &lost) && lost.Reason == lease.LostTokenGone {
		out = append(out, advice{"(removed by a forced unlock,", "(removed by unlock --force,"})
	}
	var streams *integrity.ChangeStreamsError
	if errors.As(err, &streams) {
		out = append(out, advice{streams.Error(), streams.Message(followInstead)})
	}
	var intr *runner.InterruptedError
	if errors.As(err, &intr) {
		rerun := "mongomig " + string(intr.Direction)
		var rr *rerunError
		if errors.As(err, &rr) {
			rerun = rr.rerun
		}
		out = append(out, advice{intr.Error(), intr.Message("run `" + rerun + "` again to continue")})
	}
	if errors.Is(err, version.ErrFuncNotRegistered) {
		out = append(out, advice{"(this program does not register it: see docs/lazy-upgrades.md)", "(build your own mongomig binary that registers it, see docs/lazy-upgrades.md)"})
	}
	if errors.Is(err, version.ErrInvalidFile) {
		out = append(out, advice{version.ErrInvalidFile.Error(), version.ErrInvalidFile.Error() + "; run mongomig lint"})
	}
	return out
}
