package versioned_test

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
	"github.com/mongomig/mongomig/pkg/version/versioned"
)

// TestWrapperMethods runs the methods the wrapper gained on the sandbox;
// TestWrapperMethodsMongoDB runs the same on the second server.
func TestWrapperMethods(t *testing.T) { testWrapperMethods(t, database(t, nil)) }

func TestWrapperMethodsMongoDB(t *testing.T) {
	testWrapperMethods(t, sandboxtest.MongoDB(t, "mongomig_test_versioned_methods", "no second server: TestWrapperMethods runs the same on the sandbox"))
}

func testWrapperMethods(t *testing.T, db *mongo.Database) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, raw *mongo.Collection)
	}{
		{"UpdateMany", testUpdateMany},
		{"UpdateManyRefuses", testUpdateManyRefuses},
		{"BulkWrite", testBulkWrite},
		{"Aggregate", testAggregate},
		{"PassThrough", testPassThrough},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub := db.Client().Database(db.Name() + "_" + strings.ToLower(tc.name))
			_ = sub.Drop(ctx)
			t.Cleanup(func() { _ = sub.Drop(ctx) })
			tc.fn(t, sub.Collection("users"))
		})
	}
}

var ctx = context.Background()

func idIn(ids ...bson.ObjectID) bson.D {
	return bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}
}

// testUpdateMany: an UpdateMany over users of every version upgrades the
// older ones first, then updates today's shape once each: each stored
// user is the backfill's upgrade plus the update, and an $inc counts 1.
func testUpdateMany(t *testing.T, raw *mongo.Collection) {
	reg := registry(t)
	ids := newIDs()
	docs := mixed(ids)
	if _, err := raw.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	users := versioned.New(raw, reg)
	update := bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: "suspended"}}}, {Key: "$inc", Value: bson.D{{Key: "logins", Value: int32(1)}}}}
	res, err := users.UpdateMany(ctx, idIn(ids[:]...), update)
	if err != nil || res.MatchedCount != 4 || res.ModifiedCount != 4 {
		t.Fatalf("UpdateMany: %+v, %v; want 4 matched", res, err)
	}
	for i, id := range ids {
		want, _, _ := reg.Upgrade("users", docs[i].(bson.D))
		want = set(set(want, "status", "suspended"), "logins", int32(1))
		if got := storedD(t, raw, id); !sameFields(got, want) {
			t.Errorf("version %d stored as %v, want the upgrade plus the update %v", i, got, want)
		}
	}
	if s := users.Stats(); s.Upgraded != 3 || s.Written != 3 || s.Lost != 0 {
		t.Errorf("stats %+v: want the 3 older users upgraded and written back", s)
	}
	// Every user is current now: one query that finds none, one update.
	if res, err := users.UpdateMany(ctx, idIn(ids[:]...), update); err != nil || res.MatchedCount != 4 {
		t.Fatalf("second UpdateMany: %+v, %v", res, err)
	}
	if n, _ := raw.CountDocuments(ctx, bson.D{{Key: "logins", Value: int32(2)}}); n != 4 {
		t.Errorf("%d users with 2 logins, want 4 (one $inc per call)", n)
	}
}

func set(d bson.D, k string, v any) bson.D {
	for i := range d {
		if d[i].Key == k {
			d[i].Value = v
			return d
		}
	}
	return append(d, bson.E{Key: k, Value: v})
}

// testUpdateManyRefuses: a matching document newer than the registry
// stops the call with a *version.TooNewError before anything is updated;
// an update of the step marker is refused before anything is sent.
func testUpdateManyRefuses(t *testing.T, raw *mongo.Collection) {
	old, newer := bson.NewObjectID(), bson.NewObjectID()
	if _, err := raw.InsertMany(ctx, []any{oldUser(old), bson.D{{Key: "_id", Value: newer}, {Key: "version", Value: int32(9)}}}); err != nil {
		t.Fatal(err)
	}
	users := versioned.New(raw, registry(t))
	update := bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: "suspended"}}}}
	var tooNew *version.TooNewError
	if _, err := users.UpdateMany(ctx, bson.D{}, update); !errors.As(err, &tooNew) {
		t.Errorf("UpdateMany over a newer document: %v, want a TooNewError", err)
	}
	marker := bson.D{{Key: "$set", Value: bson.D{{Key: version.MarkerField, Value: int32(1)}}}}
	if _, err := users.UpdateMany(ctx, bson.D{}, marker); err == nil {
		t.Error("UpdateMany of the step marker: accepted")
	}
	if n, _ := raw.CountDocuments(ctx, bson.D{{Key: "status", Value: "suspended"}}); n != 0 {
		t.Errorf("%d documents updated all the same", n)
	}
}

// testBulkWrite: each model has its method's semantics in one bulk
// write: inserts and replacements stamped (a forged marker dropped),
// updates applied to today's shape after the older document is upgraded,
// deletes as they are; the caller's models are left as they were.
func testBulkWrite(t *testing.T, raw *mongo.Collection) {
	ids := newIDs()
	extra := bson.NewObjectID()
	if _, err := raw.InsertMany(ctx, append(mixed(ids), oldUser(extra))); err != nil {
		t.Fatal(err)
	}
	users := versioned.New(raw, registry(t))
	fresh := bson.NewObjectID()
	today := func(id bson.ObjectID, first string) bson.M {
		return bson.M{"_id": id, "name": bson.M{"first": first, "last": "X"}, "status": "active", "plan": "free", version.MarkerField: int32(1)}
	}
	updateOne := mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: ids[1]}}).SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: "plan", Value: "pro"}}}})
	models := []mongo.WriteModel{
		mongo.NewInsertOneModel().SetDocument(today(fresh, "Eve")),
		mongo.NewReplaceOneModel().SetFilter(bson.D{{Key: "_id", Value: ids[0]}}).SetReplacement(today(ids[0], "Ada")),
		updateOne,
		mongo.NewUpdateManyModel().SetFilter(idIn(ids[2], extra)).SetUpdate(bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int32(1)}}}}),
		mongo.NewDeleteOneModel().SetFilter(bson.D{{Key: "_id", Value: ids[3]}}),
	}
	res, err := users.BulkWrite(ctx, models)
	if err != nil || res.InsertedCount != 1 || res.MatchedCount != 4 || res.DeletedCount != 1 {
		t.Fatalf("BulkWrite: %+v, %v", res, err)
	}
	for _, id := range []bson.ObjectID{fresh, ids[0], ids[1], ids[2], extra} {
		d := storedD(t, raw, id)
		if lookup(d, "version") != int32(3) || lookup(d, version.MarkerField) != nil || lookup(d, "email") != nil {
			t.Errorf("stored %v: want version 3, no marker, no email", d)
		}
	}
	if d := storedD(t, raw, ids[1]); lookup(d, "plan") != "pro" || lookup(d, "status") != "suspended" {
		t.Errorf("updated one stored as %v, want Alan's upgrade with plan pro", d)
	}
	for _, id := range []bson.ObjectID{ids[2], extra} {
		if d := storedD(t, raw, id); lookup(d, "n") != int32(1) || lookup(d, "plan") != "free" {
			t.Errorf("updated many stored as %v, want the upgrade with n 1", d)
		}
	}
	if !reflect.DeepEqual(updateOne.Filter, bson.D{{Key: "_id", Value: ids[1]}}) {
		t.Errorf("the caller's model was changed: filter %v", updateOne.Filter)
	}
	bad := []mongo.WriteModel{
		mongo.NewInsertOneModel().SetDocument(today(bson.NewObjectID(), "Zed")),
		mongo.NewUpdateManyModel().SetFilter(bson.D{}).SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: version.MarkerField, Value: int32(1)}}}}),
	}
	if _, err := users.BulkWrite(ctx, bad); err == nil {
		t.Error("a bulk write of the step marker: accepted")
	}
	if n, _ := raw.CountDocuments(ctx, bson.D{}); n != 5 {
		t.Errorf("%d documents: the refused bulk write sent something", n)
	}
}

// testAggregate: Aggregate returns the documents as stored;
// UpgradeCursor upgrades a whole-document pipeline's results as Find
// does, and writes nothing back, whatever the policy.
func testAggregate(t *testing.T, raw *mongo.Collection) {
	reg := registry(t)
	ids := newIDs()
	docs := mixed(ids)
	if _, err := raw.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	users := versioned.New(raw, reg, versioned.WithWriteBack(versioned.Sync))
	pipeline := bson.A{bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}}}
	cur, err := users.Aggregate(ctx, pipeline)
	if err != nil {
		t.Fatal(err)
	}
	var stored []bson.D
	if err := cur.All(ctx, &stored); err != nil || len(stored) != 4 || lookup(stored[0], "email") == nil {
		t.Fatalf("Aggregate gave %v, %v; want the stored shapes (email at version 0)", stored, err)
	}
	cur, err = users.Aggregate(ctx, pipeline)
	if err != nil {
		t.Fatal(err)
	}
	var all []User
	if err := users.UpgradeCursor(cur).All(ctx, &all); err != nil || len(all) != 4 {
		t.Fatalf("UpgradeCursor: %v, %v", all, err)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID.Hex() < all[j].ID.Hex() })
	for i, id := range ids {
		want, _, _ := reg.Upgrade("users", docs[i].(bson.D))
		var u User
		if err := bson.Unmarshal(mustMarshal(t, want), &u); err != nil || all[i] != u {
			t.Errorf("user %s: %+v, want %+v", id.Hex(), all[i], u)
		}
	}
	if n, _ := raw.CountDocuments(ctx, bson.D{{Key: "version", Value: int32(3)}}); n != 1 || users.Stats().Written != 0 {
		t.Errorf("%d current users, stats %+v: UpgradeCursor wrote back", n, users.Stats())
	}
}

// testPassThrough: counts, deletes and Distinct are the driver's on the
// stored documents (of every version); FindOneAndDelete's document is
// upgraded; UpdateByID is UpdateOne; a clone shares the counters.
func testPassThrough(t *testing.T, raw *mongo.Collection) {
	ids := newIDs()
	if _, err := raw.InsertMany(ctx, mixed(ids)); err != nil {
		t.Fatal(err)
	}
	users := versioned.New(raw, registry(t))
	if n, err := users.CountDocuments(ctx, bson.D{}); err != nil || n != 4 {
		t.Errorf("CountDocuments: %d, %v", n, err)
	}
	if n, err := users.EstimatedDocumentCount(ctx); err != nil || n != 4 {
		t.Errorf("EstimatedDocumentCount: %d, %v", n, err)
	}
	var statuses []string
	if err := users.Distinct(ctx, "status", bson.D{}).Decode(&statuses); err != nil || len(statuses) != 2 {
		t.Errorf("Distinct: %v, %v; want the stored active and suspended (version 0 has none)", statuses, err)
	}
	var u User
	if err := users.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: ids[0]}}).Decode(&u); err != nil || u.Contact.Email != "ada@example.com" || u.Name.First != "Ada" {
		t.Errorf("FindOneAndDelete gave %+v, %v; want Ada upgraded", u, err)
	}
	clone := users.Clone()
	if res, err := clone.UpdateByID(ctx, ids[1], bson.D{{Key: "$set", Value: bson.D{{Key: "plan", Value: "pro"}}}}); err != nil || res.MatchedCount != 1 {
		t.Fatalf("UpdateByID: %+v, %v", res, err)
	}
	if d := storedD(t, raw, ids[1]); lookup(d, "version") != int32(3) || lookup(d, "plan") != "pro" {
		t.Errorf("UpdateByID stored %v", d)
	}
	if s := users.Stats(); s.Upgraded != 2 || s.Written != 1 {
		t.Errorf("stats %+v: the clone's upgrade (and FindOneAndDelete's) are counted on the original", s)
	}
	if res, err := users.DeleteOne(ctx, bson.D{{Key: "_id", Value: ids[2]}}); err != nil || res.DeletedCount != 1 {
		t.Errorf("DeleteOne: %+v, %v", res, err)
	}
	if res, err := users.DeleteMany(ctx, bson.D{}); err != nil || res.DeletedCount != 2 {
		t.Errorf("DeleteMany: %+v, %v", res, err)
	}
	if users.Database().Name() != raw.Database().Name() {
		t.Error("Database is not the collection's")
	}
}
