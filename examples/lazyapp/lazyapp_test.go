package lazyapp_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/examples/deploy"
	"github.com/mongomig/mongomig/examples/lazyapp"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

// oldUsers are documents written before the application used mongomig:
// version 0, no version field.
func oldUsers(ada, alan, grace bson.ObjectID) []any {
	return []any{
		bson.D{{Key: "_id", Value: ada}, {Key: "name", Value: "Ada Lovelace"}, {Key: "email", Value: "ada@example.com"}},
		bson.D{{Key: "_id", Value: alan}, {Key: "name", Value: "Alan Turing"}},
		bson.D{{Key: "_id", Value: grace}, {Key: "name", Value: "Grace Hopper"}, {Key: "email", Value: "grace@example.com"}, {Key: "legacy", Value: true}},
	}
}

// stored reads a document as the server holds it, bypassing the store.
func stored(t *testing.T, users *mongo.Collection, id bson.ObjectID) bson.M {
	t.Helper()
	var m bson.M
	if err := users.FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&m); err != nil {
		t.Fatalf("read %s as stored: %v", id.Hex(), err)
	}
	return m
}

// flow is the state the steps of the guide share.
type flow struct {
	ctx              context.Context
	users            *mongo.Collection
	store            *lazyapp.Store
	ada, alan, grace bson.ObjectID
}

// TestGuideFlow runs docs/lazy-upgrades.md end to end: old documents at
// version 0, the deploy, reads that upgrade and write back, stamped and
// validated writes, and a document too new for this build. The steps run in
// order on one database.
func TestGuideFlow(t *testing.T) {
	f := start(t)
	t.Run("read upgrades and writes back", f.readUpgradesAndWritesBack)
	t.Run("a document without the optional field", f.readWithoutOptionalField)
	t.Run("bson.D reads keep fields the model lacks", f.findKeepsUnknownFields)
	t.Run("insert stamps and validates", f.insertStampsAndValidates)
	t.Run("replace keeps the version", f.replaceKeepsTheVersion)
	t.Run("too new is refused and left alone", f.tooNewIsRefused)
	t.Run("errors map to statuses", f.errorsMapToStatuses)
}

// start prepares the guide's state: users written at version 0, the deploy,
// the registry and the store.
func start(t *testing.T) *flow {
	ctx := context.Background()
	db := sandboxtest.Database(t, "lazyapp")
	users := db.Collection(lazyapp.Users)
	ada, alan, grace := bson.NewObjectID(), bson.NewObjectID(), bson.NewObjectID()
	if _, err := users.InsertMany(ctx, oldUsers(ada, alan, grace)); err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	applied, err := deploy.Migrate(ctx, db, logger)
	if err != nil || len(applied) != 2 {
		t.Fatalf("deploy: %d applied, err %v; log:\n%s", len(applied), err, &logs)
	}

	// Once, at start-up: the registry every request shares.
	reg, err := lazyapp.NewRegistry()
	if err != nil {
		t.Fatal(err) // an invalid file or an unregistered func: do not start
	}
	store := lazyapp.NewStore(db, reg)
	if got := reg.Current(lazyapp.Users); got != 2 {
		t.Fatalf("users current version = %d, want 2", got)
	}

	return &flow{ctx: ctx, users: users, store: store, ada: ada, alan: alan, grace: grace}
}

func (f *flow) readUpgradesAndWritesBack(t *testing.T) {
	ctx, users, store := f.ctx, f.users, f.store
	u, err := store.Get(ctx, f.ada)
	want := lazyapp.User{ID: f.ada, Name: lazyapp.Name{First: "Ada", Last: "Lovelace"},
		Contact: lazyapp.Contact{Email: "ada@example.com"}, Status: "active"}
	if err != nil || u != want {
		t.Fatalf("Get = %+v, %v; want %+v", u, err, want)
	}
	m := stored(t, users, f.ada)
	if m["version"] != int32(2) || m["email"] != nil || m["contact"] == nil {
		t.Fatalf("not written back as version 2: %v", m)
	}
	again, err := store.Get(ctx, f.ada)
	if err != nil || again != want {
		t.Fatalf("second Get = %+v, %v", again, err)
	}
}

func (f *flow) readWithoutOptionalField(t *testing.T) {
	ctx, store := f.ctx, f.store
	u, err := store.Get(ctx, f.alan)
	if err != nil || u.Name != (lazyapp.Name{First: "Alan", Last: "Turing"}) || u.Contact.Email != "" || u.Status != "active" {
		t.Fatalf("Get = %+v, %v", u, err)
	}
}

func (f *flow) findKeepsUnknownFields(t *testing.T) {
	ctx, users, store := f.ctx, f.users, f.store
	docs, err := store.Find(ctx, bson.D{{Key: "_id", Value: f.grace}})
	if err != nil || len(docs) != 1 {
		t.Fatalf("Find = %v, %v", docs, err)
	}
	got, _ := bson.MarshalExtJSON(docs[0], false, false)
	want := `{"_id":{"$oid":"` + f.grace.Hex() + `"},"name":{"first":"Grace","last":"Hopper"},"legacy":true,` +
		`"contact":{"email":"grace@example.com"},"status":"active","version":2}`
	if string(got) != want {
		t.Fatalf("Find upgraded to\n%s\nwant\n%s", got, want)
	}
	if m := stored(t, users, f.grace); m["version"] != int32(2) || m["legacy"] != true {
		t.Fatalf("not written back: %v", m)
	}
}

func (f *flow) insertStampsAndValidates(t *testing.T) {
	ctx, users, store := f.ctx, f.users, f.store
	id, err := store.Insert(ctx, lazyapp.User{Name: lazyapp.Name{First: "Edsger", Last: "Dijkstra"}, Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	if m := stored(t, users, id); m["version"] != int32(2) {
		t.Fatalf("inserted without the current version: %v", m)
	}
	u, err := store.Get(ctx, id)
	if err != nil || u.Name.First != "Edsger" {
		t.Fatalf("Get = %+v, %v", u, err)
	}

	_, err = store.Insert(ctx, lazyapp.User{Name: lazyapp.Name{First: "Bad"}, Contact: lazyapp.Contact{Email: "no-at-sign"}, Status: "gone"})
	var invalid *version.InvalidError
	if !errors.As(err, &invalid) || len(invalid.Failures) != 2 || lazyapp.HTTPStatus(err) != http.StatusUnprocessableEntity {
		t.Fatalf("invalid user: err %v, want an *InvalidError with 2 failures (email, status)", err)
	}
	if n, _ := users.CountDocuments(ctx, bson.D{{Key: "name.first", Value: "Bad"}}); n != 0 {
		t.Fatalf("an invalid user reached the server")
	}
}

func (f *flow) replaceKeepsTheVersion(t *testing.T) {
	ctx, users, store := f.ctx, f.users, f.store
	u, _ := store.Get(ctx, f.ada)
	u.Status = "suspended"
	found, err := store.Replace(ctx, u)
	if err != nil || !found {
		t.Fatalf("Replace = %v, %v", found, err)
	}
	if m := stored(t, users, f.ada); m["version"] != int32(2) || m["status"] != "suspended" {
		t.Fatalf("replaced as %v", m)
	}
}

func (f *flow) tooNewIsRefused(t *testing.T) {
	ctx, users, store := f.ctx, f.users, f.store
	newer := bson.NewObjectID()
	doc := bson.D{{Key: "_id", Value: newer}, {Key: "fullName", Value: "Barbara Liskov"}, {Key: "version", Value: 3}}
	if _, err := users.InsertOne(ctx, doc); err != nil {
		t.Fatal(err)
	}
	_, err := store.Get(ctx, newer)
	var tooNew *version.TooNewError
	if !errors.As(err, &tooNew) || tooNew.Version != 3 || tooNew.Current != 2 {
		t.Fatalf("Get of a version 3 document: %v, want a *version.TooNewError", err)
	}
	if got := lazyapp.HTTPStatus(err); got != http.StatusServiceUnavailable {
		t.Fatalf("HTTPStatus = %d, want 503", got)
	}
	if m := stored(t, users, newer); m["version"] != int32(3) || m["fullName"] != "Barbara Liskov" || len(m) != 3 {
		t.Fatalf("a too-new document was written: %v", m)
	}
}

func (f *flow) errorsMapToStatuses(t *testing.T) {
	ctx, users, store := f.ctx, f.users, f.store
	_, err := store.Get(ctx, bson.NewObjectID())
	if got := lazyapp.HTTPStatus(err); got != http.StatusNotFound {
		t.Fatalf("missing user: %v, status %d", err, got)
	}
	broken := bson.NewObjectID()
	if _, err := users.InsertOne(ctx, bson.D{{Key: "_id", Value: broken}, {Key: "name", Value: 42}, {Key: "version", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	_, err = store.Get(ctx, broken)
	var upErr *version.UpgradeError
	if !errors.As(err, &upErr) || upErr.Op != "func" || lazyapp.HTTPStatus(err) != http.StatusInternalServerError {
		t.Fatalf("a name splitName cannot split: %v", err)
	}
}

// TestSplitName checks the Go step on its own, as its migration's example
// would if the stock mongomig knew the function.
func TestSplitName(t *testing.T) {
	for _, tc := range []struct {
		in   bson.D
		want string
	}{
		{bson.D{{Key: "name", Value: " Ada Lovelace "}}, `{"name":{"first":"Ada","last":"Lovelace"}}`},
		{bson.D{{Key: "name", Value: "Plato"}}, `{"name":{"first":"Plato","last":""}}`},
		{bson.D{{Key: "name", Value: bson.D{{Key: "first", Value: "Ada"}}}}, `{"name":{"first":"Ada"}}`},
		{bson.D{{Key: "other", Value: 1}}, `{"other":1}`},
	} {
		got, err := lazyapp.SplitName(append(bson.D(nil), tc.in...))
		if err != nil {
			t.Fatalf("SplitName(%v): %v", tc.in, err)
		}
		if b, _ := bson.MarshalExtJSON(got, false, false); string(b) != tc.want {
			t.Errorf("SplitName(%v) = %s, want %s", tc.in, b, tc.want)
		}
	}
	if _, err := lazyapp.SplitName(bson.D{{Key: "name", Value: 42}}); err == nil {
		t.Error("SplitName of a number: no error")
	}
}
