package reshape

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/lease"
)

// NotEmptyError is a dropCollection refused because the collection still
// holds documents and the file does not say allowNonEmpty: true.
type NotEmptyError struct {
	Collection string
	Documents  int64
}

func (e *NotEmptyError) Error() string {
	return fmt.Sprintf("dropCollection %s refused: it holds %d documents; move them first (copyCollection, extract), or add `allowNonEmpty: true` to the operation if they are meant to go (they cannot come back)", e.Collection, e.Documents)
}

func (o *operation) exists(ctx context.Context, names ...string) (map[string]bool, error) {
	got, err := o.db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: bson.D{{Key: "$in", Value: names}}}})
	if err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	out := map[string]bool{}
	for _, n := range got {
		out[n] = true
	}
	return out, nil
}

// rename sends renameCollection once. Its progress is saved as started
// (pass 1) before the command, so a run resumed after the command finds
// From gone and To there and takes it as done; a first run that finds the
// same refuses (something else renamed it).
func (o *operation) rename(ctx context.Context) error {
	from, to := o.op.From, o.op.To
	ex, err := o.exists(ctx, from, to)
	if err != nil {
		return err
	}
	switch {
	case !ex[from] && ex[to] && o.p.Pass > 0:
		o.summary = fmt.Sprintf("renamed %s to %s", from, to)
		return nil
	case !ex[from]:
		return fmt.Errorf("collection %s does not exist, nothing to rename", from)
	case ex[to]:
		return fmt.Errorf("collection %s exists already; renameCollection does not overwrite it: drop or rename it in an earlier operation", to)
	}
	n, err := o.db.Collection(from).EstimatedDocumentCount(ctx)
	if err != nil {
		return fmt.Errorf("count %s: %w", from, err)
	}
	if err := o.sendRename(ctx, from, to); err != nil {
		return err
	}
	o.p.Moved = n
	o.summary = fmt.Sprintf("renamed %s to %s (%d documents)", from, to, n)
	return nil
}

// drop drops the collection, refusing one that holds documents unless
// the file allows it.
func (o *operation) drop(ctx context.Context) error {
	name := o.op.Name
	ex, err := o.exists(ctx, name)
	if err != nil {
		return err
	}
	if !ex[name] {
		o.summary = fmt.Sprintf("dropped %s (it did not exist)", name)
		return nil
	}
	n, err := o.db.Collection(name).CountDocuments(ctx, bson.D{})
	if err != nil {
		return fmt.Errorf("count %s: %w", name, err)
	}
	if n > 0 && !o.op.AllowNonEmpty {
		return &NotEmptyError{Collection: name, Documents: n}
	}
	if err := lease.Fence(ctx); err != nil {
		return err
	}
	if err := o.db.Collection(name).Drop(ctx); err != nil {
		return fmt.Errorf("drop %s: %w", name, err)
	}
	o.p.Moved = n
	o.summary = fmt.Sprintf("dropped %s (%d documents)", name, n)
	return nil
}

// copy inserts every document of From into To in _id order, a batch at a
// time, resuming after the last _id checkpointed; a document To already
// has (by _id) is left as it is.
func (o *operation) copy(ctx context.Context) error {
	src, dst := o.db.Collection(o.op.From), o.db.Collection(o.op.To)
	if o.p.Pass == 0 {
		o.p.Pass = 1
	}
	for {
		docs, err := o.nextBatch(ctx, src, nil, nil)
		if err != nil {
			return err
		}
		if len(docs) == 0 {
			o.summary = fmt.Sprintf("copied %s into %s (%d documents)", o.op.From, o.op.To, o.p.Moved)
			return nil
		}
		batch := make([]any, len(docs))
		for i, d := range docs {
			batch[i] = d
		}
		if _, err := insertNew(ctx, dst, batch); err != nil {
			return fmt.Errorf("copy into %s: %w", o.op.To, err)
		}
		// Counted with the _id the checkpoint saves: a batch walked again
		// after a crash is counted once (its inserts are duplicates).
		o.p.Moved += int64(len(docs))
		o.p.LastID = docs[len(docs)-1].Lookup("_id")
		o.hook("reshape.batch", int(o.p.Moved))
		if err := o.save(ctx); err != nil {
			return err
		}
		if err := o.throttle(ctx, len(docs)); err != nil {
			return err
		}
	}
}

// insertNew inserts docs (fenced), leaving out those whose _id is taken:
// it returns how many it inserted.
func insertNew(ctx context.Context, coll *mongo.Collection, docs []any) (int64, error) {
	if len(docs) == 0 {
		return 0, nil
	}
	if err := lease.Fence(ctx); err != nil {
		return 0, err
	}
	_, err := coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	if err == nil {
		return int64(len(docs)), nil
	}
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return 0, err
	}
	for _, we := range bwe.WriteErrors {
		if we.Code != 11000 {
			return 0, err
		}
	}
	return int64(len(docs) - len(bwe.WriteErrors)), nil
}

// sendRename records that the rename from -> to is under way (Pass 1: a
// rerun that finds from gone and to present knows it was sent), then
// sends it, fenced by the lease ctx carries.
func (o *operation) sendRename(ctx context.Context, from, to string) error {
	o.p.Pass = 1
	if err := o.save(ctx); err != nil {
		return err
	}
	if err := lease.Fence(ctx); err != nil {
		return err
	}
	db := o.db.Name()
	cmd := bson.D{{Key: "renameCollection", Value: db + "." + from}, {Key: "to", Value: db + "." + to}}
	if err := o.db.Client().Database("admin").RunCommand(ctx, cmd).Err(); err != nil {
		return fmt.Errorf("renameCollection %s to %s: %w", from, to, err)
	}
	return nil
}
