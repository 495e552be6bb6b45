package cmddoc

import (
	"fmt"
	"strings"

	"github.com/mongomig/mongomig/pkg/probe"
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
	// collection (internal/enforce), not because the server refused.
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
			what, e.File, e.Failed.Collection, Describe(e.Failed), e.Err, e.Failed.Collection)
	} else {
		fmt.Fprintf(&b, "%s %s: %s: %s failed: %v", what, e.File, e.Failed.Collection, Describe(e.Failed), commandFailure(e.Err, e.Failed, e.Direction))
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
		fmt.Fprintf(&b, "\n    %s: %s (%s)", d.Collection, Describe(d.Command), outcome)
	}
	b.WriteString("\n  not done:")
	if len(e.NotDone) == 0 {
		b.WriteString(" nothing else")
	}
	for _, c := range e.NotDone {
		fmt.Fprintf(&b, "\n    %s: %s", c.Collection, Describe(c))
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

// Describe names c: the command and its index, if any.
func Describe(c Command) string {
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
