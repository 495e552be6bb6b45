package versioned_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
	"github.com/mongomig/mongomig/pkg/version/versioned"
)

// backfilled is what a backfill makes of a stored document, decoded into
// today's struct: Registry.Upgrade of the document as stored.
func backfilled(t *testing.T, reg *version.Registry, stored bson.D) User {
	t.Helper()
	up, _, err := reg.Upgrade("users", stored)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := bson.Marshal(up)
	if err != nil {
		t.Fatal(err)
	}
	var u User
	if err := bson.Unmarshal(raw, &u); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestMixedVersionsReadAsBackfilled reads a collection holding versions
// 0-3 through every read method into structs: each equals what a backfill
// would have made of it (and what the migrations say by hand), and, with
// the default policy, nothing is written.
func TestMixedVersionsReadAsBackfilled(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	raw := database(t, rec).Collection("users")
	ids := newIDs()
	docs := mixed(ids)
	if _, err := raw.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	reg := registry(t)
	users := versioned.New(raw, reg)
	want := []User{
		{ID: ids[0], Name: Name{"Ada", "Lovelace"}, Contact: Contact{"ada@example.com"}, Status: "active", Plan: "free"},
		{ID: ids[1], Name: Name{"Alan", "Turing"}, Contact: Contact{"alan@example.com"}, Status: "suspended", Plan: "free"},
		{ID: ids[2], Name: Name{"Grace", "Hopper"}, Status: "active", Plan: "free"},
		{ID: ids[3], Name: Name{"Edsger", "Dijkstra"}, Status: "active", Plan: "pro"},
	}
	for i, id := range ids {
		if b := backfilled(t, reg, docs[i].(bson.D)); b != want[i] {
			t.Fatalf("version %d: the backfill makes %+v, the test expects %+v", i, b, want[i])
		}
		var u User
		if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&u); err != nil {
			t.Fatalf("FindOne version %d: %v", i, err)
		}
		if u != want[i] {
			t.Errorf("FindOne version %d: %+v, want %+v", i, u, want[i])
		}
		r, err := users.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
		if v, _ := reg.VersionOfRaw(r); err != nil || v != 3 {
			t.Errorf("FindOne(version %d).Raw(): version %d, err %v", i, v, err)
		}
	}

	cur, err := users.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var all []User
	if err := cur.All(ctx, &all); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("Find.All:\n got %+v\nwant %+v", all, want)
	}

	cur, err = users.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(2))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; cur.Next(ctx); i++ {
		var u User
		if err := cur.Decode(&u); err != nil || u != want[i] {
			t.Errorf("Find.Next/Decode %d: %+v, %v", i, u, err)
		}
		if v, _ := reg.VersionOfRaw(cur.Current); v != 3 {
			t.Errorf("Find: Current of document %d is at version %d", i, v)
		}
	}
	if err := cur.Close(ctx); err != nil || cur.Err() != nil {
		t.Fatal(err, cur.Err())
	}

	// A findAndModify: the wrapper upgrades the version-0 document and
	// writes it back before the update (whatever the policy: a partial
	// update must land on today's shape), then updates it.
	var u User
	err = users.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: ids[0]}}, bson.D{{Key: "$set", Value: bson.D{{Key: "seen", Value: true}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&u)
	if err != nil || u != want[0] {
		t.Errorf("FindOneAndUpdate: %+v, %v", u, err)
	}

	if n := rec.count("update"); n != 1 {
		t.Errorf("%d update commands with the Never policy, want only the findAndModify's upgrade", n)
	}
	// 3 old documents, each read by FindOne twice, Find twice; and the
	// upgrade before the findAndModify, the only one written.
	if s := users.Stats(); s.Upgraded != 3*4+1 || s.Written != 1 || s.Queued != 0 {
		t.Errorf("stats %+v: want 13 upgrades, 1 written", s)
	}
}

// TestTooNewIsAnError: a document newer than the registry knows is a
// *version.TooNewError from every read method, the target is left as it
// was (never zeroed), the cursor goes on to the next document, and
// nothing is written back.
func TestTooNewIsAnError(t *testing.T) {
	ctx := context.Background()
	raw := database(t, nil).Collection("users")
	ids := newIDs()
	docs := mixed(ids)
	newer := bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "fullName", Value: "Barbara Liskov"}, {Key: "version", Value: int32(4)}}
	if _, err := raw.InsertMany(ctx, []any{docs[0], newer, docs[3]}); err != nil {
		t.Fatal(err)
	}
	users := versioned.New(raw, registry(t), versioned.WithWriteBack(versioned.Sync))
	var tooNew *version.TooNewError

	sentinel := User{Status: "untouched"}
	u := sentinel
	err := users.FindOne(ctx, bson.D{{Key: "_id", Value: newer[0].Value}}).Decode(&u)
	if !errors.As(err, &tooNew) || tooNew.Version != 4 || tooNew.Current != 3 {
		t.Fatalf("FindOne of a version 4 document: %v, want a *version.TooNewError", err)
	}
	if u != sentinel {
		t.Errorf("the target was changed to %+v", u)
	}
	if _, err := users.FindOne(ctx, bson.D{{Key: "_id", Value: newer[0].Value}}).Raw(); !errors.As(err, &tooNew) {
		t.Errorf("Raw: %v", err)
	}

	cur, err := users.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for cur.Next(ctx) {
		var u User
		if err := cur.Decode(&u); err != nil {
			if !errors.As(err, &tooNew) || cur.Current != nil {
				t.Errorf("cursor: %v (Current %v)", err, cur.Current)
			}
			got = append(got, "too new")
			continue
		}
		got = append(got, u.Name.First)
	}
	if want := []string{"Ada", "Edsger", "too new"}; !reflect.DeepEqual(got, want) {
		t.Errorf("cursor read %v, want %v", got, want)
	}
	cur, err = users.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var all []User
	if err := cur.All(ctx, &all); !errors.As(err, &tooNew) {
		t.Errorf("All: %v, want a *version.TooNewError", err)
	}
	if d := storedD(t, raw, newer[0].Value.(bson.ObjectID)); !reflect.DeepEqual(d, newer) {
		t.Errorf("the version 4 document was changed: %v", d)
	}
}

// TestUpgradeErrorNamesTheDocument: a document a step cannot transform is
// a *version.UpgradeError naming its _id, not a half-decoded struct.
func TestUpgradeErrorNamesTheDocument(t *testing.T) {
	ctx := context.Background()
	raw := database(t, nil).Collection("users")
	id := bson.NewObjectID()
	if _, err := raw.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "name", Value: int32(7)}, {Key: "version", Value: int32(1)}}); err != nil {
		t.Fatal(err)
	}
	var u User
	err := versioned.New(raw, registry(t)).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&u)
	var ue *version.UpgradeError
	if !errors.As(err, &ue) || ue.ID != id || u != (User{}) {
		t.Errorf("got %v and %+v, want a *version.UpgradeError for %s", err, u, id.Hex())
	}
}

// TestNoDocumentsIsTheDriversError: the driver's errors come through as
// they are.
func TestNoDocumentsIsTheDriversError(t *testing.T) {
	users := versioned.New(database(t, nil).Collection("users"), registry(t))
	var u User
	if err := users.FindOne(context.Background(), bson.D{}).Decode(&u); !errors.Is(err, mongo.ErrNoDocuments) {
		t.Errorf("FindOne on an empty collection: %v", err)
	}
}

// TestBSONOptionsDecodeUpgradedDocuments: an upgraded document read
// through FindOne is decoded with the options given to the wrapper, as the
// driver decodes a current one with the client's: here JSON struct tags.
func TestBSONOptionsDecodeUpgradedDocuments(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	bsonOpts := &options.BSONOptions{UseJSONStructTags: true}
	raw := sandboxtest.Connect(t, srv.URI(), options.Client().SetBSONOptions(bsonOpts)).Database("app").Collection("users")
	ids := newIDs()
	docs := mixed(ids)
	if _, err := raw.InsertMany(ctx, []any{docs[2], docs[3]}); err != nil {
		t.Fatal(err)
	}
	type tagged struct {
		Tier string `json:"plan"`
	}
	users := versioned.New(raw, registry(t), versioned.WithBSONOptions(bsonOpts))
	for i, want := range map[int]string{2: "free", 3: "pro"} {
		var u tagged
		if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: ids[i]}}).Decode(&u); err != nil || u.Tier != want {
			t.Errorf("version %d: %+v, %v; want plan %q through the json tag", i, u, err, want)
		}
	}
}
