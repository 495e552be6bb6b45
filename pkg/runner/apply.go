package runner

import (
	"context"
	"fmt"
	"slices"

	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/probe"
	"go.mongodb.org/mongo-driver/v2/bson"
)

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
	case (c.Name == "create" || c.Name == "collMod") && probe.IsNotSupported(err) && len(c.Features) == 0:
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
	case c.Name == "drop" && probe.HasCode(err, probe.CodeNamespaceNotFound):
		what := "collection" // a bucket member (buckets.go)
		if slices.Contains(c.Features, probe.FeatureViews) {
			what = "view"
		}
		return CommandResult{Command: c, Outcome: OutcomeSkipped, Note: what + " already absent"}, nil
	case c.Name == "dropIndexes" && probe.HasCode(err, probe.CodeIndexNotFound, probe.CodeNamespaceNotFound):
		return CommandResult{Command: c, Outcome: OutcomeSkipped, Note: "index already absent"}, nil
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
	if c.Name == CommandDeleteExpired {
		// Batches, each fenced, stopping between two when ctx ends (internal/expiry).
		res, err := r.expiry().Run(ctx, version, c)
		return res, nil, err
	}
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
	if slices.Contains(list, s) {
		return list
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
