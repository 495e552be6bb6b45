package versioned_test

import (
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/version/versioned"
)

// oldRelease is a release that predates mongomig: it replaces whole
// documents in its own shape, without the version field. It writes once,
// from the observer, at the first event of the given kind: after the
// wrapper's upgrade was written back and before its update is sent (the
// interleaving that could make an update land on an old shape).
type oldRelease struct {
	coll *mongo.Collection
	kind versioned.EventKind
	id   bson.ObjectID
	doc  bson.D
	once sync.Once
	err  error
}

func (o *oldRelease) observe(e versioned.Event) {
	if e.Kind == o.kind {
		o.once.Do(func() {
			_, o.err = o.coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: o.id}}, o.doc)
		})
	}
}

// TestUpdateOneRacesAnOldRelease: between UpdateOne's upgrade of a
// version 0 user and its update, the old release rewrites the user whole
// at version 0 with a new email. The update, restricted to the current
// version, matches nothing; the wrapper upgrades the old release's
// document in turn and updates it: the stored user is today's shape
// holding both the old release's email and the update, once.
func TestUpdateOneRacesAnOldRelease(t *testing.T) {
	raw := database(t, nil).Collection("users")
	id := bson.NewObjectID()
	if _, err := raw.InsertOne(ctx, oldUser(id)); err != nil {
		t.Fatal(err)
	}
	rewritten := append(oldUser(id)[:0:0], oldUser(id)...)
	rewritten[2].Value = "rewritten@example.com"
	old := &oldRelease{coll: raw, kind: versioned.WroteBack, id: id, doc: rewritten}
	users := versioned.New(raw, registry(t), versioned.WithObserver(old.observe))
	inc := bson.D{{Key: "$inc", Value: bson.D{{Key: "logins", Value: int32(1)}}}}
	res, err := users.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, inc)
	if err != nil || old.err != nil || res.MatchedCount != 1 {
		t.Fatalf("UpdateOne: %+v, %v (old release: %v)", res, err, old.err)
	}
	d := storedD(t, raw, id)
	if lookup(d, "version") != int32(3) || emailOf(t, d) != "rewritten@example.com" || lookup(d, "email") != nil || lookup(d, "logins") != int32(1) {
		t.Errorf("stored %v: want today's shape with the old release's email and one login", d)
	}
	if s := users.Stats(); s.Upgraded != 2 || s.Written != 2 {
		t.Errorf("stats %+v: want two upgrades (the first, then the old release's)", s)
	}
}

// TestUpdateManyRacesAnOldRelease: between UpdateMany's upgrade of three
// version 0 users and its update, the old release rewrites one of them
// whole at version 0. The update applies to today's shape only: the two
// others are updated, the rewritten one is left as the old release wrote
// it (never a mix of its shape and the update), and MatchedCount says 2.
// Read through the wrapper, it is then served upgraded. The same for a
// BulkWrite's UpdateManyModel, and for the field the update changes.
func TestUpdateManyRacesAnOldRelease(t *testing.T) {
	for _, bulk := range []bool{false, true} {
		name := map[bool]string{false: "UpdateMany", true: "BulkWrite"}[bulk]
		t.Run(name, func(t *testing.T) {
			raw := database(t, nil).Collection("users")
			ids := []bson.ObjectID{bson.NewObjectID(), bson.NewObjectID(), bson.NewObjectID()}
			for _, id := range ids {
				if _, err := raw.InsertOne(ctx, oldUser(id)); err != nil {
					t.Fatal(err)
				}
			}
			// The old release sets status itself, the field the update writes.
			rewritten := append(oldUser(ids[1]), bson.E{Key: "status", Value: "active"})
			old := &oldRelease{coll: raw, kind: versioned.Flushed, id: ids[1], doc: rewritten}
			users := versioned.New(raw, registry(t), versioned.WithObserver(old.observe))
			set := bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: "suspended"}}}}
			var matched int64
			var err error
			if bulk {
				var res *mongo.BulkWriteResult
				res, err = users.BulkWrite(ctx, []mongo.WriteModel{mongo.NewUpdateManyModel().SetFilter(idIn(ids...)).SetUpdate(set)}, options.BulkWrite())
				if res != nil {
					matched = res.MatchedCount
				}
			} else {
				var res *mongo.UpdateResult
				res, err = users.UpdateMany(ctx, idIn(ids...), set)
				if res != nil {
					matched = res.MatchedCount
				}
			}
			if err != nil || old.err != nil || matched != 2 {
				t.Fatalf("%s: matched %d, %v (old release: %v); want 2", name, matched, err, old.err)
			}
			for _, id := range []bson.ObjectID{ids[0], ids[2]} {
				if d := storedD(t, raw, id); lookup(d, "version") != int32(3) || lookup(d, "status") != "suspended" {
					t.Errorf("stored %v: want today's shape, suspended", d)
				}
			}
			if d := storedD(t, raw, ids[1]); !sameFields(d, rewritten) {
				t.Errorf("the old release's user stored as %v, want exactly what it wrote %v", d, rewritten)
			}
			var u User
			if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: ids[1]}}).Decode(&u); err != nil || u.Status != "active" || u.Contact.Email != "old@example.com" {
				t.Errorf("read back %+v, %v", u, err)
			}
		})
	}
}
