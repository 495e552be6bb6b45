package downgrade

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// Pass is a revert's document passes over the collections migration M
// downgrades (Check's pendings), each a [Walk] whose progress and count
// are logged.
type Pass struct {
	DB       *mongo.Database
	Registry *version.Registry
	Log      events.Logger
	M        *migration.Migration
	// BeforeWrite, when set, runs before every bulk write with the
	// version downgraded from and the write's size (tests stop a run
	// there).
	BeforeWrite func(version int64, n int)
}

// PassError is a document pass that stopped on an error other than an
// interruption: what it did (Done), what it left (Left), and what a
// later down does (Resumes), for the runner's RevertStoppedError.
type PassError struct {
	Done, Left, Resumes string
	Err                 error
}

func (e *PassError) Error() string { return e.Done + ": " + e.Err.Error() }
func (e *PassError) Unwrap() error { return e.Err }

func (p Pass) walk(ctx context.Context, d Pending) (n, reread int64, err error) {
	w := Walk{Coll: p.DB.Collection(d.Coll), Name: d.Coll, Version: d.From, Registry: p.Registry, Progress: NewProgress(p.Log, p.M, d).Add}
	if p.BeforeWrite != nil {
		w.BeforeWrite = func(n int) { p.BeforeWrite(d.From, n) }
	}
	return w.Documents(ctx)
}

func (p Pass) logDone(d Pending, n, reread int64) {
	p.Log.Log(events.DocumentsDowngraded{Version: p.M.Version, File: p.M.File, Collection: d.Coll, From: d.From, To: d.To, Count: n, Reread: reread})
}

// First downgrades the documents of each of downs in turn, under the open
// validator window and before the validators and indexes are reverted;
// reopen runs first for each collection (the runner reopens its window's
// flags). It returns the documents changed and those downgraded so far,
// which an error after it carries ([Stopped]); an interruption, or a
// failed reopen, is [Stopped]'s error, a walk's other error a
// [*PassError].
func (p Pass) First(ctx context.Context, downs []Pending, reopen func(ctx context.Context, coll string) error) (changes []DocumentChange, downgraded []DowngradeCount, err error) {
	for _, d := range downs {
		if err := reopen(ctx, d.Coll); err != nil {
			return changes, downgraded, Stopped(ctx, p.M, downgraded, false, err)
		}
		n, reread, err := p.walk(ctx, d)
		if n > 0 {
			left := int64(0)
			if err != nil {
				left = max(d.Count-n, 0)
			}
			downgraded = append(downgraded, DowngradeCount{DocumentChange: DocumentChange{Collection: d.Coll, From: d.From, To: d.To, Count: n}, Left: left})
		}
		if err != nil {
			if ctx.Err() != nil {
				return changes, downgraded, Stopped(ctx, p.M, downgraded, false, err)
			}
			return changes, downgraded, &PassError{Done: fmt.Sprintf("%s: downgraded %d documents", d.Coll, n),
				Left: "nothing else was reverted", Resumes: "it continues with the documents left", Err: err}
		}
		changes = append(changes, DocumentChange{Collection: d.Coll, From: d.From, To: d.To, Count: n})
		p.logDone(d, n, reread)
	}
	return changes, downgraded, nil
}

// Late makes one more pass over each collection of downs once the
// restoring collMod is in force, adding what it downgrades to changes:
// the release being rolled back still runs, and a document it wrote at a
// reverted version between the last pass and the collMod was accepted by
// the window then in force (the restored validator refuses the next ones
// where the server enforces it). Its error is a [*PassError].
func (p Pass) Late(ctx context.Context, downs []Pending, changes []DocumentChange) error {
	for _, d := range downs {
		n, reread, err := p.walk(ctx, d)
		if err != nil {
			return &PassError{Err: err,
				Done: fmt.Sprintf("%s: its validators and indexes are reverted, but %d documents written at version %d meanwhile were downgraded", d.Coll, n, d.From)}
		}
		if n == 0 {
			continue
		}
		for i := range changes {
			if changes[i].Collection == d.Coll && changes[i].From == d.From {
				changes[i].Count += n
			}
		}
		p.logDone(d, n, reread)
	}
	return nil
}
