package runner

// The extract window (internal/window, invariants 5 to 7; internal/windowplan
// decides it): every validator sent for an extract's parent holds it
// open, up's tighten closes it here, and status says which stay open.

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/statusview"
	"github.com/mongomig/mongomig/internal/window"
	"github.com/mongomig/mongomig/internal/windowplan"
	"github.com/mongomig/mongomig/pkg/events"
)

// withExtracts is v, the validator of coll as of migration at, with
// coll's open extract windows held open (windowplan's WithExtracts).
func (r *Runner) withExtracts(ctx context.Context, coll string, at int64, v bson.D) (bson.D, error) {
	return r.windows().WithExtracts(ctx, coll, at, v)
}

// extractClose is tighten's part for the extract windows: the commands
// it sent and the windows it left open, with why.
type extractClose struct {
	results    []CommandResult
	clientSide []string
	held       []HeldWindow
}

// planExtractWindows are the collMods up would send to close extract
// windows and the windows it would leave open (the dry run).
func (r *Runner) planExtractWindows(ctx context.Context, top int64) ([]Command, []HeldWindow, error) {
	return r.windows().PlanExtracts(ctx, top)
}

// closeExtractWindows closes, under the lock ctx carries, each extract
// window of the migrations up to top that may close, and says why each
// other one stays open.
func (r *Runner) closeExtractWindows(ctx context.Context, top int64) (extractClose, error) {
	var out extractClose
	ds, held, err := r.windows().ExtractDecisions(ctx, top)
	out.held = held
	if err != nil {
		return out, err
	}
	for _, d := range ds {
		if err := r.closeExtracts(ctx, d, &out); err != nil {
			return out, err
		}
	}
	for _, h := range out.held {
		r.cfg.log.Log(events.WindowHeld{Collection: h.Collection, Message: h.Message})
	}
	return out, nil
}

// closeExtracts sends d's collMod, then proves again (an old release's
// write in between was accepted): a parent found then sends the window
// again and is reported held; the others are recorded closed.
func (r *Runner) closeExtracts(ctx context.Context, d windowplan.Closing, out *extractClose) error {
	send := func(cmd Command) error {
		if cmd.Collection == "" {
			return nil
		}
		res, cs, err := r.runAll(ctx, 0, "validator window", "up", []Command{cmd})
		out.results, out.clientSide = append(out.results, res...), append(out.clientSide, cs...)
		return err
	}
	if err := send(d.Cmd); err != nil {
		return err
	}
	w := r.windows()
	held, err := w.Prove(ctx, d, func(x window.Extract) error {
		if err := r.state.MarkRunWindowClosed(finishing(ctx), x.Version, x.Index); err != nil {
			return err
		}
		r.cfg.log.Log(events.WindowClosed{Collection: d.Coll})
		return nil
	})
	out.held = append(out.held, held...)
	if err != nil || len(held) == 0 {
		return err
	}
	// The proof failed after the collMod: what closed is reported held
	// unless recorded; the window of every unrecorded one goes back.
	cmd, ok, err := w.Reopen(ctx, d)
	if err != nil || !ok {
		return err
	}
	r.cfg.log.Log(events.WindowReopened{Collection: d.Coll, Version: r.window.DocVersionAt(d.Coll, d.Top)})
	return send(cmd)
}

// ExtractWindow is an open extract window as status shows it.
type ExtractWindow = statusview.ExtractWindow

// extractStatus lists cs's open extract windows as of migration top, and
// returns the validators the server may hold for it with them open (the
// window and the plain schema, each with the open extract windows).
func (r *Runner) extractStatus(ctx context.Context, cs *CollectionStatus, top int64) ([]bson.D, error) {
	rows, vs, err := r.windows().ExtractStatus(ctx, cs.Name, top)
	cs.ExtractWindows = append(cs.ExtractWindows, rows...)
	return vs, err
}
