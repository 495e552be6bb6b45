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
func commandFailure(err error, c Command, direction string) string {
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

// Outcome of one command.
const (
	OutcomeOK         = "ok"
	OutcomeSkipped    = "skipped"        // nothing to do (index already absent)
	OutcomeClientSide = "clientSideOnly" // the server refused the validator
)

// CommandResult is a command that ran and how it ended.
type CommandResult struct {
	Command
	Outcome string `json:"outcome"`
	Note    string `json:"note,omitempty"`
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
	Direction string // "up" or "down"
	Done      []CommandResult
	Failed    Command
	NotDone   []Command
	Err       error
}

func (e *PartialError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s: %s failed: %v", map[string]string{"up": "apply", "down": "revert"}[e.Direction], e.File, e.Failed.Collection, describeCommand(e.Failed), commandFailure(e.Err, e.Failed, e.Direction))
	if hint := conflictHint(e.Err, e.Failed); hint != "" {
		b.WriteString("\n  " + hint)
	}
	b.WriteString("\n  done:")
	if len(e.Done) == 0 {
		b.WriteString(" nothing")
	}
	for _, d := range e.Done {
		fmt.Fprintf(&b, "\n    %s: %s (%s)", d.Collection, describeCommand(d.Command), d.Outcome)
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
		e.Version, map[string]string{"up": "applied", "down": "reverted"}[e.Direction], verb)
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
// absent is skipped.
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
		return r.run(ctx, collModCommand(c.Collection, c.Doc[1:]))
	case c.Name == "collMod" && probe.HasCode(err, probe.CodeNamespaceNotFound):
		return r.run(ctx, createCommand(c.Collection, c.Doc[1:]))
	case (c.Name == "create" || c.Name == "collMod") && probe.IsNotSupported(err):
		note := fmt.Sprintf("the server refused %s with a validator (%s): the validator is enforced client-side only", c.Name, probe.ServerMessage(err))
		if c.Name == "create" {
			plain := createCommand(c.Collection, nil)
			if perr := r.db.RunCommand(ctx, plain.Doc).Err(); perr != nil && !probe.HasCode(perr, probe.CodeNamespaceExists) {
				return CommandResult{}, fmt.Errorf("create %s without validator: %w", c.Collection, perr)
			}
		}
		return CommandResult{Command: c, Outcome: OutcomeClientSide, Note: note}, nil
	case c.Name == "dropIndexes" && probe.HasCode(err, probe.CodeIndexNotFound, probe.CodeNamespaceNotFound):
		return CommandResult{Command: c, Outcome: OutcomeSkipped, Note: "index already absent"}, nil
	}
	return CommandResult{}, err
}

// runAll runs cmds in order, stopping at the first failure with a
// PartialError. It returns the collections whose validator is client-side
// only.
func (r *Runner) runAll(ctx context.Context, version int64, file, direction string, cmds []Command) ([]CommandResult, []string, error) {
	var done []CommandResult
	var clientSide []string
	for i, c := range cmds {
		if err := ctx.Err(); err != nil {
			return done, clientSide, &PartialError{Version: version, File: file, Direction: direction, Done: done, Failed: c, NotDone: cmds[i+1:], Err: err}
		}
		// The lease must still be ours before anything is sent.
		if err := fence(ctx); err != nil {
			return done, clientSide, &PartialError{Version: version, File: file, Direction: direction, Done: done, Failed: c, NotDone: cmds[i+1:], Err: err}
		}
		// The safe points are between commands: one already decided on
		// runs to its end even if ctx is cancelled meanwhile.
		res, err := r.run(context.WithoutCancel(ctx), c)
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
