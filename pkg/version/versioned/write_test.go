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

// TestWritesAreStamped: InsertOne, InsertMany, ReplaceOne and
// FindOneAndReplace store structs, bson.D and bson.M with the current
// version, and read back as written.
func TestWritesAreStamped(t *testing.T) {
	ctx := context.Background()
	raw := database(t, nil).Collection("users")
	reg := registry(t)
	users := versioned.New(raw, reg)
	ada := User{ID: bson.NewObjectID(), Name: Name{"Ada", "Lovelace"}, Status: "active", Plan: "free"}
	if _, err := users.InsertOne(ctx, ada); err != nil {
		t.Fatal(err)
	}
	alan, grace := bson.NewObjectID(), bson.NewObjectID()
	if _, err := users.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: alan}, {Key: "name", Value: bson.D{{Key: "first", Value: "Alan"}}}, {Key: "status", Value: "active"}, {Key: "plan", Value: "pro"}},
		bson.M{"_id": grace, "name": bson.M{"first": "Grace"}, "status": "active", "plan": "free"},
	}); err != nil {
		t.Fatal(err)
	}
	res, err := users.InsertOne(ctx, User{Name: Name{First: "Edsger"}, Status: "active", Plan: "free"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.InsertedID.(bson.ObjectID); !ok {
		t.Errorf("InsertedID = %v", res.InsertedID)
	}
	ada.Status = "suspended"
	if r, err := users.ReplaceOne(ctx, bson.D{{Key: "_id", Value: ada.ID}}, ada); err != nil || r.ModifiedCount != 1 {
		t.Fatalf("ReplaceOne: %+v, %v", r, err)
	}
	var before User
	err = users.FindOneAndReplace(ctx, bson.D{{Key: "_id", Value: alan}}, User{ID: alan, Name: Name{"Alan", "Turing"}, Status: "active", Plan: "pro"}).Decode(&before)
	if err != nil || before.Name.First != "Alan" || before.Name.Last != "" {
		t.Fatalf("FindOneAndReplace: %+v, %v", before, err)
	}
	for _, id := range []any{ada.ID, alan, grace, res.InsertedID} {
		d := storedD(t, raw, id.(bson.ObjectID))
		if v := lookup(d, "version"); v != int32(3) {
			t.Errorf("%v stored at version %v: %v", id, v, d)
		}
	}
	var got User
	if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: ada.ID}}).Decode(&got); err != nil || got != ada {
		t.Errorf("read back %+v, %v; want %+v", got, err, ada)
	}
	if s := users.Stats(); s.Upgraded != 0 {
		t.Errorf("documents written by the wrapper needed upgrades: %+v", s)
	}
}

// TestValidationBeforeWrites: WithValidation refuses a document the
// current validator refuses, before anything is sent; InsertMany sends
// none of the batch.
func TestValidationBeforeWrites(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	raw := database(t, rec).Collection("users")
	users := versioned.New(raw, registry(t), versioned.WithValidation())
	bad := User{ID: bson.NewObjectID(), Name: Name{"Ada", "Lovelace"}, Status: "retired", Plan: "free"}
	good := User{ID: bson.NewObjectID(), Name: Name{"Alan", "Turing"}, Status: "active", Plan: "free"}
	var invalid *version.InvalidError
	if _, err := users.InsertOne(ctx, bad); !errors.As(err, &invalid) {
		t.Errorf("InsertOne of an invalid user: %v", err)
	}
	if _, err := users.InsertMany(ctx, []User{good, bad}); !errors.As(err, &invalid) {
		t.Errorf("InsertMany with an invalid user: %v", err)
	}
	if _, err := users.ReplaceOne(ctx, bson.D{{Key: "_id", Value: good.ID}}, bad, options.Replace().SetUpsert(true)); !errors.As(err, &invalid) {
		t.Errorf("ReplaceOne with an invalid user: %v", err)
	}
	if err := users.FindOneAndReplace(ctx, bson.D{{Key: "_id", Value: good.ID}}, bad).Err(); !errors.As(err, &invalid) {
		t.Errorf("FindOneAndReplace with an invalid user: %v", err)
	}
	if n := rec.count("insert") + rec.count("update") + rec.count("findAndModify"); n != 0 {
		t.Errorf("%d writes sent for invalid documents", n)
	}
	if _, err := users.InsertOne(ctx, good); err != nil {
		t.Errorf("a valid user: %v", err)
	}
}

// TestUnknownCollectionIsRefused: a collection no migration names (a
// typo) is refused on read and write, not stamped version 0.
func TestUnknownCollectionIsRefused(t *testing.T) {
	ctx := context.Background()
	raw := database(t, nil).Collection("usres")
	if _, err := raw.InsertOne(ctx, bson.D{{Key: "name", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	users := versioned.New(raw, registry(t))
	if _, err := users.InsertOne(ctx, User{}); !errors.Is(err, version.ErrUnknownCollection) {
		t.Errorf("InsertOne: %v", err)
	}
	var u User
	if err := users.FindOne(ctx, bson.D{}).Decode(&u); !errors.Is(err, version.ErrUnknownCollection) {
		t.Errorf("FindOne: %v", err)
	}
	// An empty result is no excuse: the typo is reported before any
	// query (it used to read as "no documents in result").
	if err := users.FindOne(ctx, bson.D{{Key: "name", Value: "nobody"}}).Decode(&u); !errors.Is(err, version.ErrUnknownCollection) {
		t.Errorf("FindOne matching nothing: %v", err)
	}
	if _, err := users.Find(ctx, bson.D{{Key: "name", Value: "nobody"}}); !errors.Is(err, version.ErrUnknownCollection) {
		t.Errorf("Find matching nothing: %v", err)
	}
	if err := users.FindOneAndUpdate(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "name", Value: "y"}}}}).Err(); !errors.Is(err, version.ErrUnknownCollection) {
		t.Errorf("FindOneAndUpdate: %v", err)
	}
	var stored bson.D
	if err := raw.FindOne(ctx, bson.D{}).Decode(&stored); err != nil || stored[1].Value != "x" {
		t.Errorf("the refused update changed the document: %v %v", stored, err)
	}
}
