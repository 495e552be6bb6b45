package versioned_test

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/version"
	"github.com/mongomig/mongomig/pkg/version/versioned"
)

// oldUser is a users document at version 0, as an older release wrote it.
func oldUser(id bson.ObjectID) bson.D {
	return bson.D{{Key: "_id", Value: id}, {Key: "name", Value: "Ada Lovelace"}, {Key: "email", Value: "old@example.com"}, {Key: "legacy", Value: true}}
}

func emailOf(t *testing.T, d bson.D) any {
	t.Helper()
	contact, _ := lookup(d, "contact").(bson.D)
	return lookup(contact, "email")
}

// TestUpdateNeverErasesItsOwnWrite: the current release
// $sets contact.email on a user still at version 0 ({email: old}), with
// After and Sync. The server used to store both fields, the upgrade's
// rename of email onto contact.email then overwrote the new value with
// the old one, the caller was served the old value and the write-back
// stored it. The wrapper now upgrades (and writes back) the document
// before the update, so the update lands on today's shape: the caller is
// served the value it wrote, the stored document is current and holds
// it, and no email is left to rename. The same for UpdateOne.
func TestUpdateNeverErasesItsOwnWrite(t *testing.T) {
	ctx := context.Background()
	db := database(t, nil)
	raw := db.Collection("users")
	users := versioned.New(raw, registry(t), versioned.WithWriteBack(versioned.Sync))
	a, b := bson.NewObjectID(), bson.NewObjectID()
	if _, err := raw.InsertMany(ctx, []any{oldUser(a), oldUser(b)}); err != nil {
		t.Fatal(err)
	}
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "contact.email", Value: "new@example.com"}}}}
	var u User
	err := users.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: a}}, set, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&u)
	if err != nil {
		t.Fatal(err)
	}
	if u.Contact.Email != "new@example.com" {
		t.Errorf("FindOneAndUpdate served contact.email %q, want the value it wrote", u.Contact.Email)
	}
	res, err := users.UpdateOne(ctx, bson.D{{Key: "_id", Value: b}}, set)
	if err != nil || res.MatchedCount != 1 {
		t.Fatalf("UpdateOne: %v, %+v", err, res)
	}
	for _, id := range []bson.ObjectID{a, b} {
		d := storedD(t, raw, id)
		if emailOf(t, d) != "new@example.com" || lookup(d, "email") != nil || lookup(d, "version") != int32(3) {
			t.Errorf("stored %v, want version 3 with contact.email new@example.com and no email", d)
		}
		var again User
		if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&again); err != nil || again.Contact.Email != "new@example.com" {
			t.Errorf("read back %+v, %v", again, err)
		}
	}
}

// TestUpdateOfADocumentNoUpgradeAccepts: a document newer than the
// registry, or one its upgrade refuses, is not updated at all; the
// caller gets the error.
func TestUpdateOfADocumentNoUpgradeAccepts(t *testing.T) {
	ctx := context.Background()
	db := database(t, nil)
	raw := db.Collection("users")
	users := versioned.New(raw, registry(t))
	newer, clash := bson.NewObjectID(), bson.NewObjectID()
	docs := []any{
		bson.D{{Key: "_id", Value: newer}, {Key: "version", Value: int32(9)}},
		// contact.email exists with another value: the rename refuses.
		append(oldUser(clash), bson.E{Key: "contact", Value: bson.D{{Key: "email", Value: "other@example.com"}}}),
	}
	if _, err := raw.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: "suspended"}}}}
	var tooNew *version.TooNewError
	if _, err := users.UpdateOne(ctx, bson.D{{Key: "_id", Value: newer}}, set); !errors.As(err, &tooNew) {
		t.Errorf("UpdateOne of a newer document: %v, want a TooNewError", err)
	}
	var ue *version.UpgradeError
	var ow *version.OverwriteError
	if err := users.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: clash}}, set).Err(); !errors.As(err, &ue) || !errors.As(err, &ow) {
		t.Errorf("FindOneAndUpdate of a document whose rename would overwrite: %v, want an UpgradeError", err)
	}
	for _, id := range []bson.ObjectID{newer, clash} {
		if d := storedD(t, raw, id); lookup(d, "status") != nil {
			t.Errorf("stored %v: updated all the same", d)
		}
	}
}

// TestUpsertFindsTheOldDocument: an upsert whose filter matches a
// document below the current version upgrades and updates it rather than
// inserting a second one; one that matches nothing inserts a current
// document. (The filter is matched against the documents as stored: an
// older document is found when the filter matches its stored shape, as an
// _id does.)
func TestUpsertFindsTheOldDocument(t *testing.T) {
	ctx := context.Background()
	db := database(t, nil)
	raw := db.Collection("users")
	users := versioned.New(raw, registry(t))
	old, absent := bson.NewObjectID(), bson.NewObjectID()
	if _, err := raw.InsertOne(ctx, oldUser(old)); err != nil {
		t.Fatal(err)
	}
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: "suspended"}}}}
	for _, id := range []bson.ObjectID{old, absent} {
		if _, err := users.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, set, options.UpdateOne().SetUpsert(true)); err != nil {
			t.Fatalf("%s: %v", id.Hex(), err)
		}
	}
	n, err := raw.CountDocuments(ctx, bson.D{{Key: "version", Value: int32(3)}, {Key: "status", Value: "suspended"}})
	if err != nil || n != 2 {
		t.Errorf("%d current suspended users (%v), want the upgraded one and the inserted one", n, err)
	}
	if all, _ := raw.CountDocuments(ctx, bson.D{}); all != 2 {
		t.Errorf("%d users, want 2", all)
	}
}

// TestApplicationWritesCarryNoMarker, on the write paths:
// a document written whole is current, so a step marker in the
// application's document (a bson.M built from a client's JSON) is
// dropped by InsertOne, InsertMany, ReplaceOne and FindOneAndReplace
// (Registry.Stamp), as its version field is replaced; an update that
// writes the marker ($setOnInsert, $set, a $rename onto it, an upsert's
// filter) is refused and nothing is sent. A forged marker used to make
// the next migration's upgrade resume from it and skip steps.
func TestApplicationWritesCarryNoMarker(t *testing.T) {
	ctx := context.Background()
	db := database(t, nil)
	raw := db.Collection("users")
	users := versioned.New(raw, registry(t))
	forged := bson.D{{Key: "target", Value: int32(4)}, {Key: "step", Value: int32(1)}}
	doc := func(id bson.ObjectID) bson.M {
		return bson.M{"_id": id, "name": bson.M{"first": "Eve", "last": "X"}, "status": "active", "plan": "free", version.MarkerField: forged}
	}
	ids := [4]bson.ObjectID{bson.NewObjectID(), bson.NewObjectID(), bson.NewObjectID(), bson.NewObjectID()}
	if _, err := users.InsertOne(ctx, doc(ids[0])); err != nil {
		t.Fatal(err)
	}
	if _, err := users.InsertMany(ctx, []bson.M{doc(ids[1]), doc(ids[2])}); err != nil {
		t.Fatal(err)
	}
	if _, err := users.ReplaceOne(ctx, bson.D{{Key: "_id", Value: ids[2]}}, doc(ids[2])); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.InsertOne(ctx, bson.D{{Key: "_id", Value: ids[3]}}); err != nil {
		t.Fatal(err)
	}
	if err := users.FindOneAndReplace(ctx, bson.D{{Key: "_id", Value: ids[3]}}, doc(ids[3])).Err(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if d := storedD(t, raw, id); lookup(d, version.MarkerField) != nil || lookup(d, "version") != int32(3) {
			t.Errorf("stored %v, want version 3 and no marker", d)
		}
	}
	fresh := bson.NewObjectID()
	upsert := options.UpdateOne().SetUpsert(true)
	for name, update := range map[string]bson.D{
		"$setOnInsert": {{Key: "$setOnInsert", Value: bson.D{{Key: version.MarkerField, Value: forged}}}},
		"$set":         {{Key: "$set", Value: bson.M{version.MarkerField + ".step": 2}}},
		"$rename":      {{Key: "$rename", Value: bson.D{{Key: "plan", Value: version.MarkerField}}}},
	} {
		if _, err := users.UpdateOne(ctx, bson.D{{Key: "_id", Value: fresh}}, update, upsert); err == nil {
			t.Errorf("UpdateOne with %s of the marker: accepted", name)
		}
		if err := users.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: ids[0]}}, update).Err(); err == nil {
			t.Errorf("FindOneAndUpdate with %s of the marker: accepted", name)
		}
	}
	byMarker := bson.D{{Key: "_id", Value: fresh}, {Key: version.MarkerField, Value: forged}}
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: "active"}}}}
	if _, err := users.UpdateOne(ctx, byMarker, set, upsert); err == nil {
		t.Error("an upsert whose filter names the marker: accepted")
	}
	if n, _ := raw.CountDocuments(ctx, bson.D{{Key: version.MarkerField, Value: bson.D{{Key: "$exists", Value: true}}}}); n != 0 {
		t.Errorf("%d documents carry a marker", n)
	}
	if n, _ := raw.CountDocuments(ctx, bson.D{{Key: "_id", Value: fresh}}); n != 0 {
		t.Error("a refused upsert inserted its document")
	}
}
