package state

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// A run-once operation's progress (pkg/reshape states its protocol):
// "$run$<version>$<index>", the index-th operation of migration version's
// `run:` list. A collection name never contains '$', so the key is no
// collection's checkpoint. It is written only by `up` and `down`, under
// the migration lock (every write fenced by it), as a $set of its own
// fields; Done is set once the operation finished, so a run resumed after
// a crash before the ledger was written does not repeat it.

// RunProgress is the stored progress of one run-once operation.
type RunProgress struct {
	ID      string `bson:"_id"`
	Version int64  `bson:"version"`
	Index   int    `bson:"index"`
	Kind    string `bson:"kind"`
	// LastID is the _id the current pass walked up to (nil: the pass
	// starts from the lowest).
	LastID any `bson:"lastId"`
	// Pass counts the walks started (1 for the first).
	Pass int `bson:"pass"`
	// PassMoved is what the current pass moved or copied so far.
	PassMoved int64 `bson:"passMoved"`
	// Moved is what every pass moved or copied.
	Moved int64 `bson:"moved"`
	Done  bool  `bson:"done"`
	// WindowClosed: the extract window of this operation was closed
	// (internal/window, invariant 6). Written only by the runner, by
	// [Store.MarkRunWindowClosed]; SaveRunProgress never writes it.
	WindowClosed bool      `bson:"windowClosed,omitempty"`
	UpdatedAt    time.Time `bson:"updatedAt"`
}

// MarkRunWindowClosed records that the extract window of operation index
// of migration version was closed (fenced by the migration lock ctx
// carries). Its progress document exists: the operation is done.
func (s *Store) MarkRunWindowClosed(ctx context.Context, version int64, index int) error {
	err := fenced(ctx, func() error {
		_, err := s.c.UpdateOne(ctx, byID(RunKey(version, index)), bson.D{{Key: "$set", Value: bson.D{{Key: "windowClosed", Value: true}}}})
		return err
	})
	if err != nil {
		return fmt.Errorf("record that the validator window of run operation %d of migration %d closed: %w", index+1, version, err)
	}
	return nil
}

// RunWindowClosed reports whether the extract window of operation index
// of migration version was closed.
func (s *Store) RunWindowClosed(ctx context.Context, version int64, index int) (bool, error) {
	p, err := s.RunProgressOf(ctx, version, index, "")
	return p.WindowClosed, err
}

// RunKey is the _id of the progress of operation index of migration version.
func RunKey(version int64, index int) string { return fmt.Sprintf("$run$%d$%d", version, index) }

// RunProgressOf reads the progress of operation index of migration
// version: a new one (Pass 0) when none was stored.
func (s *Store) RunProgressOf(ctx context.Context, version int64, index int, kind string) (RunProgress, error) {
	key := RunKey(version, index)
	cp := RunProgress{}
	err := s.c.FindOne(ctx, byID(key)).Decode(&cp)
	if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return cp, fmt.Errorf("read the progress of run operation %d of migration %d: %w", index+1, version, err)
	}
	if err != nil {
		return RunProgress{ID: key, Version: version, Index: index, Kind: kind}, nil
	}
	return cp, nil
}

// SaveRunProgress writes p's fields (fenced by the migration lock ctx
// carries), creating the document if needed.
func (s *Store) SaveRunProgress(ctx context.Context, p *RunProgress) error {
	p.UpdatedAt = time.Now()
	err := fenced(ctx, func() error {
		_, err := s.c.UpdateOne(ctx, byID(p.ID), bson.D{{Key: "$set", Value: bson.D{
			{Key: "version", Value: p.Version}, {Key: "index", Value: p.Index}, {Key: "kind", Value: p.Kind},
			{Key: "lastId", Value: p.LastID}, {Key: "pass", Value: p.Pass}, {Key: "passMoved", Value: p.PassMoved},
			{Key: "moved", Value: p.Moved}, {Key: "done", Value: p.Done}, {Key: "updatedAt", Value: p.UpdatedAt},
		}}}, options.UpdateOne().SetUpsert(true))
		return err
	})
	if err != nil {
		return fmt.Errorf("save the progress of run operation %d of migration %d: %w", p.Index+1, p.Version, err)
	}
	return nil
}

// ForgetRun removes the progress of every run operation of migration
// version (down, after reverting them).
func (s *Store) ForgetRun(ctx context.Context, version int64) error {
	return s.forgetPrefix(ctx, fmt.Sprintf("^\\$run\\$%d\\$", version), fmt.Sprintf("the progress of the run operations of migration %d", version))
}

// RunDownKey is the _id of the progress of reverting operation index of
// migration version (down): beside the operation's own, and removed with
// it by [Store.ForgetRun].
func RunDownKey(version int64, index int) string { return RunKey(version, index) + "$down" }

// RunDownProgressOf reads the progress of reverting operation index of
// migration version: a new one (Pass 0) when none was stored.
func (s *Store) RunDownProgressOf(ctx context.Context, version int64, index int, kind string) (RunProgress, error) {
	key := RunDownKey(version, index)
	cp := RunProgress{}
	err := s.c.FindOne(ctx, byID(key)).Decode(&cp)
	if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return cp, fmt.Errorf("read the progress of reverting run operation %d of migration %d: %w", index+1, version, err)
	}
	if err != nil {
		return RunProgress{ID: key, Version: version, Index: index, Kind: kind}, nil
	}
	return cp, nil
}
