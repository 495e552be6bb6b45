// Package state is the one owner of mongomig_backfill, the collection of
// backfill checkpoints, range plans and range checkpoints (and of the
// repair's progress, run-once progress and the follower's resume token,
// whose files state their rules). Every read and write of it goes through
// a [Store]; no other package names it.
//
// A collection's checkpoint (_id: the collection's name) holds three field
// groups, each with one writer:
//
//   - progress (target, lastId, upgraded, done, rangesCounted, updatedAt,
//     runStartedAt, runFrom): the backfill, under the collection's backfill
//     lease ([Store.Begin], [Store.SaveProgress]); runStartedAt and runFrom
//     are when the last run began and what upgraded counted then, so that
//     status can tell that run's rate;
//   - proof (proven, provenAt): set true only by [Store.Prove], conditional on the
//     target and on the generation the backfill read when it began; the
//     backfill may clear it (a walk that found documents left);
//   - window (tightened, generation): the runner, under the migration lock
//     ([Store.MarkTightened], [Store.Reopen]).
//
// Invariants:
//
//  1. Writes are $set (or $inc) of one group's fields, never a whole
//     document: a writer of one group never overwrites another's fields
//     with values it read earlier.
//  2. Every reopen of the validator window increments generation and
//     clears proven and tightened. A proof computed before a reopen carries
//     the older generation and matches nothing: it is never recorded.
//  3. proven is true only for the target it was proven for: beginning a
//     backfill to another target clears it in the same write that sets the
//     target.
//  4. Every write is fenced by the lease its context carries (see
//     lease.Fence), and sent with majority write concern, so a checkpoint
//     survives a failover and a holder that lost its lease writes nothing.
//  5. Removal ([Store.Forget]) is down's, under the migration lock and the
//     collection's backfill lease, so no backfill writes progress back.
package state

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/mongomig/mongomig/pkg/lease"
)

// Collection is where backfill checkpoints are kept.
const Collection = "mongomig_backfill"

// ErrCheckpointMoved is returned by [Store.SaveProgress] when the
// checkpoint's target changed, or the checkpoint was removed, since the
// backfill began: another process (a down, a backfill of a newer target)
// owns it now.
var ErrCheckpointMoved = errors.New("the backfill checkpoint changed under this backfill")

// Checkpoint is the stored progress of one collection's backfill (or of
// one range of a parallel backfill, whose ID is "<coll>$range$<target>$<i>").
type Checkpoint struct {
	ID       string `bson:"_id"`
	Target   int64  `bson:"target"`
	LastID   any    `bson:"lastId"`
	Upgraded int64  `bson:"upgraded"`
	Done     bool   `bson:"done"`
	// Proven: after a complete walk no document below Target remained.
	Proven bool `bson:"proven"`
	// Tightened: up has closed the validator window for Target.
	Tightened bool `bson:"tightened"`
	// Generation counts the window's reopenings (invariant 2).
	Generation int64 `bson:"generation"`
	// RangesCounted: Upgraded includes what the _id ranges of Target
	// upgraded, counted once; until then a total adds their checkpoints'.
	RangesCounted bool      `bson:"rangesCounted"`
	UpdatedAt     time.Time `bson:"updatedAt"`
	// RunStartedAt is when the run that saved this checkpoint last began
	// and RunFrom what Upgraded counted then ([Store.Begin] sets both in
	// the checkpoint it returns; [Store.SaveProgress] stores them):
	// (Upgraded-RunFrom) over (UpdatedAt-RunStartedAt) is that run's rate.
	RunStartedAt time.Time `bson:"runStartedAt,omitempty"`
	RunFrom      int64     `bson:"runFrom,omitempty"`
	// ProvenAt is when [Store.Prove] recorded the proof (zero before
	// proofs carried it).
	ProvenAt time.Time `bson:"provenAt,omitempty"`
}

// Store reads and writes the checkpoints of one database.
type Store struct {
	c *mongo.Collection
}

// New is the store of db.
func New(db *mongo.Database) *Store {
	return &Store{c: db.Collection(Collection, options.Collection().SetWriteConcern(writeconcern.Majority()))}
}

func byID(id string) bson.D { return bson.D{{Key: "_id", Value: id}} }

// Read returns coll's checkpoint, nil if it has none.
func (s *Store) Read(ctx context.Context, coll string) (*Checkpoint, error) {
	return s.read(ctx, coll, "backfill checkpoint of "+coll)
}

func (s *Store) read(ctx context.Context, id, what string) (*Checkpoint, error) {
	var cp Checkpoint
	err := s.c.FindOne(ctx, byID(id)).Decode(&cp)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return &cp, nil
}

// Begin reads the checkpoint of coll's backfill to target, or starts a new
// one; resumed tells whether a walk stopped half-way. A checkpoint of
// another target is restarted at once (target set, progress and proof
// cleared, invariant 3); a finished walk walks again from the start,
// keeping its count and proof. The returned Generation is the one a proof
// of this walk is conditional on.
func (s *Store) Begin(ctx context.Context, coll string, target int64) (cp Checkpoint, resumed bool, err error) {
	cp, resumed, err = s.begin(ctx, coll, target)
	cp.RunStartedAt, cp.RunFrom = time.Now(), cp.Upgraded
	return cp, resumed, err
}

func (s *Store) begin(ctx context.Context, coll string, target int64) (cp Checkpoint, resumed bool, err error) {
	old, err := s.Read(ctx, coll)
	switch {
	case err != nil:
		return cp, false, err
	case old == nil:
		return Checkpoint{ID: coll, Target: target}, false, nil
	case old.Target != target:
		cp = Checkpoint{ID: coll, Target: target, Generation: old.Generation, Tightened: old.Tightened}
		if err := fenced(ctx, func() error {
			_, err := s.c.UpdateOne(ctx, byID(coll), bson.D{{Key: "$set", Value: bson.D{
				{Key: "target", Value: target}, {Key: "lastId", Value: nil}, {Key: "upgraded", Value: int64(0)},
				{Key: "done", Value: false}, {Key: "proven", Value: false}, {Key: "rangesCounted", Value: false},
				{Key: "updatedAt", Value: time.Now()},
			}}})
			return err
		}); err != nil {
			return cp, false, fmt.Errorf("restart the backfill checkpoint of %s at version %d: %w", coll, target, err)
		}
		return cp, false, nil
	case old.Done:
		// A finished walk walks again from the start (only documents still
		// below target match: failures, and old writers' documents).
		cp = *old
		cp.LastID, cp.Done = nil, false
		return cp, false, nil
	}
	return *old, old.LastID != nil, nil
}

// SaveProgress writes cp's progress fields (and clears the proof when cp
// is not proven), only while the stored checkpoint is still at cp.Target:
// [ErrCheckpointMoved] otherwise. It creates the checkpoint if none exists.
func (s *Store) SaveProgress(ctx context.Context, cp *Checkpoint) error {
	set := bson.D{
		{Key: "target", Value: cp.Target}, {Key: "lastId", Value: cp.LastID}, {Key: "upgraded", Value: cp.Upgraded},
		{Key: "done", Value: cp.Done}, {Key: "rangesCounted", Value: cp.RangesCounted}, {Key: "updatedAt", Value: time.Now()},
	}
	if !cp.RunStartedAt.IsZero() {
		set = append(set, bson.E{Key: "runStartedAt", Value: cp.RunStartedAt}, bson.E{Key: "runFrom", Value: cp.RunFrom})
	}
	onInsert := bson.D{{Key: "tightened", Value: false}, {Key: "generation", Value: cp.Generation}}
	if !cp.Proven {
		set = append(set, bson.E{Key: "proven", Value: false})
	} else {
		onInsert = append(onInsert, bson.E{Key: "proven", Value: false})
	}
	err := fenced(ctx, func() error {
		_, err := s.c.UpdateOne(ctx, bson.D{{Key: "_id", Value: cp.ID}, {Key: "target", Value: cp.Target}},
			bson.D{{Key: "$set", Value: set}, {Key: "$setOnInsert", Value: onInsert}}, options.UpdateOne().SetUpsert(true))
		return err
	})
	if mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("save backfill checkpoint of %s: %w (it is at another version now)", cp.ID, ErrCheckpointMoved)
	}
	if err != nil {
		return fmt.Errorf("save backfill checkpoint of %s: %w", cp.ID, err)
	}
	return nil
}

// Prove records that no document of coll below target remained, only if
// the checkpoint is still at target and at generation (the one
// [Store.Begin] returned): false, with nothing written, when the window
// was reopened (or the checkpoint moved) since.
func (s *Store) Prove(ctx context.Context, coll string, target, generation int64) (bool, error) {
	var res *mongo.UpdateResult
	err := fenced(ctx, func() error {
		var err error
		res, err = s.c.UpdateOne(ctx, bson.D{{Key: "_id", Value: coll}, {Key: "target", Value: target}, {Key: "generation", Value: generationIs(generation)}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "proven", Value: true}, {Key: "provenAt", Value: time.Now()}, {Key: "updatedAt", Value: time.Now()}}}})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("record the proof of %s's backfill: %w", coll, err)
	}
	return res.MatchedCount == 1, nil
}

// MarkTightened records that coll's window was closed (the runner, under
// the migration lock).
func (s *Store) MarkTightened(ctx context.Context, coll string) error {
	err := fenced(ctx, func() error {
		_, err := s.c.UpdateOne(ctx, byID(coll), bson.D{{Key: "$set", Value: bson.D{{Key: "tightened", Value: true}}}})
		return err
	})
	if err != nil {
		return fmt.Errorf("record the tightened validator of %s: %w", coll, err)
	}
	return nil
}

// Reopen clears coll's proof and tightened flag and increments its
// generation (invariant 2): a window was sent, so older documents may
// exist again, and a proof computed before now must not be recorded.
func (s *Store) Reopen(ctx context.Context, coll string) error {
	err := fenced(ctx, func() error {
		_, err := s.c.UpdateOne(ctx, byID(coll), bson.D{
			{Key: "$set", Value: bson.D{{Key: "proven", Value: false}, {Key: "tightened", Value: false}}},
			{Key: "$inc", Value: bson.D{{Key: "generation", Value: int64(1)}}},
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("reopen the validator window of %s: %w", coll, err)
	}
	return nil
}

// Forget removes coll's backfill progress toward version v or above: its
// checkpoint, range plans and range checkpoints (down, reverting v).
func (s *Store) Forget(ctx context.Context, coll string, v int64) error {
	stale := bson.D{{Key: "target", Value: bson.D{{Key: "$gte", Value: v}}}}
	return fenced(ctx, func() error {
		if _, err := s.c.DeleteOne(ctx, append(byID(coll), stale...)); err != nil {
			return fmt.Errorf("remove the backfill checkpoint of %s: %w", coll, err)
		}
		if _, err := s.c.DeleteMany(ctx, append(rangesOf(coll), stale...)); err != nil {
			return fmt.Errorf("remove the backfill ranges of %s: %w", coll, err)
		}
		return nil
	})
}

func rangesOf(coll string) bson.D {
	return bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^" + regexp.QuoteMeta(coll) + `\$(plan|range|markers)\$`}}}}
}

// fenced runs write after the fence of the lease ctx carries.
func fenced(ctx context.Context, write func() error) error {
	if err := lease.Fence(ctx); err != nil {
		return err
	}
	return write()
}

// generationIs matches generation g: a checkpoint written before
// generations existed has none, which is generation 0.
func generationIs(g int64) any {
	if g == 0 {
		return bson.D{{Key: "$in", Value: bson.A{int64(0), nil}}}
	}
	return g
}
