package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/probe"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// commandFailure is what a failed command's error says of the server's
// answer: serverMessage, except for a unique index that cannot be built
// because documents share a key, which is said in mongomig's words with
// the way to list them (up's dry run predicts its builds; down's does not).
// MongoDB answers DuplicateKey ("E11000 duplicate
// key error ...", jstests/core/uniqueness.js), whose text is kept for the
// key it quotes; FerretDB v1 answers code 1 with SQLite's "UNIQUE
// constraint failed: index 'customers_c09344de_mail_1' (2067)"
// (serverCode), dropped: it names a table, not the index.
func commandFailure(err error, c Command, direction Direction) string {
	if c.Name != "createIndexes" || probe.ServerCode(err) != probe.CodeDuplicateKey {
		return probe.ServerMessage(err)
	}
	msg := fmt.Sprintf("index %s on %s cannot be built: documents share a key", c.Index, c.Collection)
	if direction == "up" {
		msg += " (run `mongomig up --dry-run` to list them)"
	}
	if probe.HasCode(err, probe.CodeDuplicateKey) {
		msg += "; the server: " + probe.ServerMessage(err)
	}
	return msg
}

// Outcome is what became of one command.
type Outcome string

// Outcomes.
const (
	OutcomeOK         Outcome = "ok"
	OutcomeSkipped    Outcome = "skipped"        // nothing to do (index already absent)
	OutcomeClientSide Outcome = "clientSideOnly" // the server refused the validator, or it was asked client-side only
)

// Direction is which way a run changes the database.
type Direction string

// Directions.
const (
	DirectionUp   Direction = "up"
	DirectionDown Direction = "down"
)

// CommandResult is a command that ran and how it ended.
type CommandResult struct {
	Command
	Outcome Outcome `json:"outcome"`
	Note    string  `json:"note,omitempty"`
	// SentAfterLoss: the fence after the command found the lease lost, so
	// the server may have run it after another process took the lock over
	// (a holder paused between its fence and its send): what it did may
	// undo that process's work.
	SentAfterLoss bool `json:"sentAfterLeaseLost,omitempty"`
	// Asked: client-side only because WithClientSideValidators named the
	// collection (enforce.go), not because the server refused.
	Asked bool `json:"clientSideAsked,omitempty"`
}

// PartialError is a migration that failed part-way: what was done, what
// failed, what was not done, and how to recover. Nothing was recorded in
// the ledger; every command is idempotent, so running the same command
// again finishes the work.
type PartialError struct {
	Version   int64
	File      string
	Direction Direction
	Done      []CommandResult
	Failed    Command
	NotDone   []Command
	Err       error
	// SentAfterLoss: Failed did not fail; it was sent (its result is the
	// last of Done) and the lease was found lost after it (Err), so it may
	// have reached the server after another process took the lock over.
	SentAfterLoss bool
}

func (e *PartialError) Error() string {
	var b strings.Builder
	what := map[Direction]string{DirectionUp: "apply", DirectionDown: "revert"}[e.Direction]
	if e.SentAfterLoss {
		fmt.Fprintf(&b, "%s %s: %s: %s was sent after the lease was lost: %v; another process may have taken the lock over and changed %s since, so this command may have undone its work",
			what, e.File, e.Failed.Collection, describeCommand(e.Failed), e.Err, e.Failed.Collection)
	} else {
		fmt.Fprintf(&b, "%s %s: %s: %s failed: %v", what, e.File, e.Failed.Collection, describeCommand(e.Failed), commandFailure(e.Err, e.Failed, e.Direction))
	}
	if hint := conflictHint(e.Err, e.Failed); hint != "" {
		b.WriteString("\n  " + hint)
	}
	b.WriteString("\n  done:")
	if len(e.Done) == 0 {
		b.WriteString(" nothing")
	}
	for _, d := range e.Done {
		outcome := d.Outcome
		if d.SentAfterLoss {
			outcome += ", sent after the lease was lost"
		}
		fmt.Fprintf(&b, "\n    %s: %s (%s)", d.Collection, describeCommand(d.Command), outcome)
	}
	b.WriteString("\n  not done:")
	if len(e.NotDone) == 0 {
		b.WriteString(" nothing else")
	}
	for _, c := range e.NotDone {
		fmt.Fprintf(&b, "\n    %s: %s", c.Collection, describeCommand(c))
	}
	verb := "up"
	if e.Direction == "down" {
		verb = "down"
	}
	fmt.Fprintf(&b, "\n  migration %d is not recorded as %s; fix the cause and run `mongomig %s` again (every step is idempotent)",
		e.Version, map[Direction]string{DirectionUp: "applied", DirectionDown: "reverted"}[e.Direction], verb)
	return b.String()
}

func (e *PartialError) Unwrap() error { return e.Err }

func describeCommand(c Command) string {
	if c.Index != "" {
		return c.Name + " " + c.Index
	}
	return c.Name
}

func conflictHint(err error, c Command) string {
	if c.Name == "createIndexes" && probe.HasCode(err, probe.CodeIndexOptionsConflict, probe.CodeIndexKeySpecsConflict) {
		return fmt.Sprintf("an index with the name %q or the same keys already exists with other options; drop it first (indexes.drop in this or an earlier migration) or give the new index another name", c.Index)
	}
	if probe.IsNotSupported(err) {
		return "the server does not implement this command or one of its options (see `mongomig info`)"
	}
	return ""
}

// run executes one command, adapting to the server: create falls back to
// collMod when the collection exists (and back), validators the server
// refuses become client-side only, and an index to drop that is already
// absent is skipped. Each fallback is a command of its own, sent only
// after a fence of the lease ctx carries.
func (r *Runner) run(ctx context.Context, c Command) (CommandResult, error) {
	// enforce.go: a validator asked to be client-side only is not sent, one
	// the server does not enforce never is; readback.go: what is sent is
	// read back.
	if res, ok, err := r.runClientSide(ctx, c); ok {
		return res, err
	}
	if err := r.guardEnforceable(ctx, c); err != nil {
		return CommandResult{}, err
	}
	err := r.db.RunCommand(ctx, c.Doc).Err()
	switch {
	case err == nil:
		return r.readBack(ctx, c)
	case c.Name == "create" && probe.HasCode(err, probe.CodeNamespaceExists):
		return r.fallback(ctx, collModCommand(c.Collection, c.Doc[1:]))
	case c.Name == "collMod" && probe.HasCode(err, probe.CodeNamespaceNotFound):
		return r.fallback(ctx, createCommand(c.Collection, c.Doc[1:]))
	case (c.Name == "create" || c.Name == "collMod") && probe.IsNotSupported(err):
		note := fmt.Sprintf("the server refused %s with a validator (%s): the validator is enforced client-side only", c.Name, probe.ServerMessage(err))
		if c.Name == "create" {
			plain := createCommand(c.Collection, nil)
			if ferr := fence(ctx); ferr != nil {
				return CommandResult{}, ferr
			}
			if perr := r.db.RunCommand(ctx, plain.Doc).Err(); perr != nil && !probe.HasCode(perr, probe.CodeNamespaceExists) {
				return CommandResult{}, fmt.Errorf("create %s without validator: %w", c.Collection, perr)
			}
		}
		return CommandResult{Command: c, Outcome: OutcomeClientSide, Note: note}, nil
	case c.Name == "dropIndexes" && probe.HasCode(err, probe.CodeIndexNotFound, probe.CodeNamespaceNotFound):
		return CommandResult{Command: c, Outcome: OutcomeSkipped, Note: "index already absent"}, nil
	case c.Name == "drop" && probe.HasCode(err, probe.CodeNamespaceNotFound):
		return CommandResult{Command: c, Outcome: OutcomeSkipped, Note: "collection already absent"}, nil // a bucket member (buckets.go)
	}
	return CommandResult{}, err
}

// fallback sends c, the fallback of a command the server refused, after a
// fence: the lease may have been lost while the first one was answered.
func (r *Runner) fallback(ctx context.Context, c Command) (CommandResult, error) {
	if err := fence(ctx); err != nil {
		return CommandResult{}, err
	}
	return r.run(ctx, c)
}

// send fences, sends c (see run) and fences again: a command is sent only
// while the lease is held, but a process paused between the fence and the
// send (SIGSTOP, a long GC pause, a frozen VM) sends it late, maybe after
// another process took the lease over. lost is the loss the second fence
// found: c's result is then marked SentAfterLoss.
func (r *Runner) send(ctx context.Context, version int64, i int, c Command) (res CommandResult, lost, err error) {
	if err := fence(ctx); err != nil {
		return CommandResult{}, nil, err
	}
	if r.hook != nil {
		r.hook("fenced", version, i)
	}
	// The safe points are between commands: one already decided on runs
	// to its end even if ctx is cancelled meanwhile.
	res, err = r.run(context.WithoutCancel(ctx), c)
	if err != nil {
		return res, nil, err
	}
	if lost = fence(context.WithoutCancel(ctx)); lost != nil {
		res.SentAfterLoss = true
	}
	return res, lost, nil
}

// runAll runs cmds in order, stopping at the first failure with a
// PartialError. It returns the collections whose validator is client-side
// only.
func (r *Runner) runAll(ctx context.Context, version int64, file string, direction Direction, cmds []Command) ([]CommandResult, []string, error) {
	var done []CommandResult
	var clientSide []string
	for i, c := range cmds {
		if err := ctx.Err(); err != nil {
			return done, clientSide, &PartialError{Version: version, File: file, Direction: direction, Done: done, Failed: c, NotDone: cmds[i+1:], Err: err}
		}
		// The lease must still be ours before anything is sent, and after.
		res, lost, err := r.send(ctx, version, i, c)
		if err != nil {
			return done, clientSide, &PartialError{Version: version, File: file, Direction: direction, Done: done, Failed: c, NotDone: cmds[i+1:], Err: err}
		}
		done = append(done, res)
		var e events.Entry = events.CommandSent{Version: version, File: file, Collection: c.Collection, Command: c.Name, Summary: describeCommand(c)}
		switch res.Outcome {
		case OutcomeSkipped:
			e = events.CommandSkipped{Version: version, File: file, Collection: c.Collection, Command: c.Name, Summary: describeCommand(c), Why: res.Note}
		case OutcomeClientSide:
			e = events.ValidatorClientSide{Version: version, File: file, Collection: c.Collection, Command: c.Name, Why: res.Note}
			clientSide = appendUnique(clientSide, c.Collection)
		}
		r.cfg.log.Log(e)
		if lost != nil {
			return done, clientSide, &PartialError{Version: version, File: file, Direction: direction, Done: done, Failed: c, NotDone: cmds[i+1:], Err: lost, SentAfterLoss: true}
		}
		if r.hook != nil {
			r.hook("command", version, i)
		}
	}
	return done, clientSide, nil
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// existing returns the names of the database's collections.
func (r *Runner) existing(ctx context.Context) (map[string]bool, error) {
	names, err := r.db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out, nil
}
