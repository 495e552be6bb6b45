package runner_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/runner"
)

func indexNames(t testing.TB, coll *mongo.Collection) map[string]bool {
	t.Helper()
	names, err := coll.Indexes().ListSpecifications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, s := range names {
		out[s.Name] = true
	}
	return out
}

func equalVersions(a []int64, b ...int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestUpFromEmptyThenNothingPending(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	var logged []events.Entry
	r := newRunner(t, db, samples(t), runner.WithLogger(events.LoggerFunc(func(e events.Entry) { logged = append(logged, e) })))

	applied, err := r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied.Applied) != 4 || !equalVersions(ledgerVersions(t, db), 1, 2, 3, 4) {
		t.Fatalf("applied %d, ledger %v", len(applied.Applied), ledgerVersions(t, db))
	}
	// The sandbox refuses validators: recorded as client-side only.
	if got := strings.Join(applied.Applied[1].ClientSideValidators, ","); got != "comments,orders,posts" {
		t.Errorf("client-side validators of 0002 = %q", got)
	}
	// Indexes of 0001..0003: email_1 created then dropped, contact.email_1 created.
	users := indexNames(t, db.Collection("users"))
	if users["email_1"] || !users["contact.email_1"] {
		t.Errorf("users indexes = %v", users)
	}
	if idx := indexNames(t, db.Collection("comments")); !idx["by_post"] {
		t.Errorf("comments indexes = %v", idx)
	}

	// The exact commands: create with the validator for a new collection,
	// collMod for an existing one.
	creates := rec.Named("create")
	var usersCreate bson.Raw
	for _, c := range creates {
		if c.Lookup("create").StringValue() == "users" && c.Lookup("validator").Type != 0 {
			usersCreate = c
		}
	}
	if usersCreate == nil {
		t.Fatal("no create of users with a validator was sent")
	}
	if lvl := usersCreate.Lookup("validationLevel").StringValue(); lvl != "strict" {
		t.Errorf("users create validationLevel = %q", lvl)
	}
	req := usersCreate.Lookup("validator", "$jsonSchema", "required").Array().String()
	if req != `["name","email"]` {
		t.Errorf("users create validator required = %s", req)
	}
	var collMod bson.Raw
	for _, c := range rec.Named("collMod") {
		if c.Lookup("collMod").StringValue() == "users" {
			collMod = c
		}
	}
	// 0003 raises users to document version 3: the validator is sent inside
	// the window, accepting older versions until a backfill proves none
	// left, each checked against its own schema: version 3 against 0003's,
	// version 0 (no version field) against 0001's (the
	// old window let every older document through unchecked).
	ms, err := migration.Load(samples(t))
	if err != nil {
		t.Fatal(err)
	}
	schema3, schema0 := ms[2].Collection("users").Validator, ms[0].Collection("users").Validator
	// A branch names its version as pkg/version's rule has it: never an
	// array holding it.
	notArray := bson.E{Key: "$not", Value: bson.D{{Key: "$type", Value: "array"}}}
	num := bson.A{"int", "long", "double"}
	is0 := bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "version", Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: "version", Value: bson.D{{Key: "$type", Value: "null"}, notArray}}},
		bson.D{{Key: "version", Value: bson.D{{Key: "$eq", Value: int32(0)}, {Key: "$type", Value: num}, notArray}}},
	}}}
	window := bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "version", Value: bson.D{{Key: "$eq", Value: int32(3)}, {Key: "$type", Value: num}, notArray}}}, schema3}}},
		bson.D{{Key: "$and", Value: bson.A{is0, schema0}}},
	}}}
	wantWindow, _ := bson.Marshal(window)
	if collMod == nil || collMod.Lookup("validationLevel").StringValue() != "moderate" || !bytes.Equal(collMod.Lookup("validator").Document(), wantWindow) {
		t.Errorf("users collMod of 0003 = %v\nwant validator %v", collMod, bson.Raw(wantWindow))
	}

	var sawClientSide bool
	for _, e := range logged {
		_, ok := e.(events.ValidatorClientSide)
		sawClientSide = sawClientSide || ok
	}
	if !sawClientSide {
		t.Error("no client-side-only event")
	}

	again, err := r.Up(ctx)
	if err != nil || len(again.Applied) != 0 || again.Tightened != nil {
		t.Fatalf("second Up: %d applied, err %v", len(again.Applied), err)
	}
}

func TestUpToThenRest(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	r := newRunner(t, db, samples(t))
	if _, err := r.UpTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1, 2) {
		t.Fatalf("ledger after UpTo(2) = %v", v)
	}
	p, err := r.Plan(ctx, runner.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Migrations) != 2 || p.Migrations[0].Version != 3 || p.Current != 2 || p.Target != 4 {
		t.Fatalf("plan = %+v", p)
	}
	// 0003 modifies the existing users collection and swaps its indexes.
	var names []string
	for _, c := range p.Migrations[0].Commands {
		names = append(names, c.Name+":"+c.Index)
	}
	if got := strings.Join(names, " "); got != "collMod: dropIndexes:email_1 createIndexes:contact.email_1" {
		t.Errorf("0003 commands = %s", got)
	}
	if len(p.Notes) == 0 || !strings.Contains(p.Notes[0], "FerretDB") {
		t.Errorf("plan notes = %v", p.Notes)
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1, 2) {
		t.Fatalf("Plan changed the ledger: %v", v)
	}
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1, 2, 3, 4) {
		t.Fatalf("ledger = %v", v)
	}
}

func TestDriftRefused(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	fsys := samples(t)
	if _, err := newRunner(t, db, fsys).UpTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	edited := fstest.MapFS{}
	for k, v := range fsys {
		edited[k] = v
	}
	// A comment alone is not drift (TestDocumentaryEditsAreNotDrift); a
	// changed validation level is.
	edited["0001_create_users.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(string(fsys["0001_create_users.yaml"].Data), "validationLevel: strict", "validationLevel: moderate", 1))}
	_, err := newRunner(t, db, edited).Up(ctx)
	var drift *runner.DriftError
	if !errors.As(err, &drift) || !strings.Contains(err.Error(), "0001_create_users.yaml was edited after it was applied") || !strings.Contains(err.Error(), "or accept it if the edit changes nothing the database sees") {
		t.Fatalf("want a drift error naming the file and the way out, got %v", err)
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1, 2) {
		t.Fatalf("drift refusal applied something: %v", v)
	}
	st, err := newRunner(t, db, edited).Status(ctx)
	if err != nil || st.Drifted != 1 || st.Pending != 2 || st.Clean() {
		t.Fatalf("status = %+v, %v", st, err)
	}
	if _, err := newRunner(t, db, edited, runner.WithAllowDrift(true)).Up(ctx); err != nil {
		t.Fatalf("with drift allowed: %v", err)
	}
	// A deleted applied file is drift too.
	delete(edited, "0004_order_currency_and_tags.yaml")
	_, err = newRunner(t, db, edited).Up(ctx)
	if err == nil || !strings.Contains(err.Error(), "migration 4 (0004_order_currency_and_tags.yaml) is applied but its file is gone") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestOutOfOrderRefused(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	fsys := samples(t)
	late := fsys["0002_orders_and_blog.yaml"]
	delete(fsys, "0002_orders_and_blog.yaml")
	if _, err := newRunner(t, db, fsys).Up(ctx); err != nil {
		t.Fatal(err)
	}
	fsys["0002_orders_and_blog.yaml"] = late
	_, err := newRunner(t, db, fsys).Up(ctx)
	var oe *runner.OrderError
	if !errors.As(err, &oe) || !strings.Contains(err.Error(), "0002_orders_and_blog.yaml is pending but migration 4 is already applied; renumber it") {
		t.Fatalf("got %v", err)
	}
}

func TestDownRevertsIndexesValidatorsAndData(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	r := newRunner(t, db, samples(t))

	if _, err := r.Down(ctx); !errors.Is(err, runner.ErrNothingToRevert) {
		t.Fatalf("down on an empty database: %v", err)
	}
	if _, err := r.UpTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	users := db.Collection("users")
	// One user at version 3 (as the application writes them), one older.
	v3 := bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: "Ada"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "ada@x"}}}, {Key: "status", Value: "active"}, {Key: "version", Value: 3}}
	v0 := bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: "Old"}, {Key: "email", Value: "old@x"}}
	if _, err := users.InsertMany(ctx, []any{v3, v0}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.DownTo(ctx, 9); !errors.Is(err, runner.ErrNothingToRevert) || !strings.Contains(err.Error(), "the database is at version 3, not above 9") {
		t.Fatalf("down to a version above the current: %v", err)
	}
	p, err := r.PlanDown(ctx, 2)
	if err != nil || len(p.Migrations) != 1 || p.Migrations[0].Version != 3 {
		t.Fatalf("PlanDown = %+v, %v", p, err)
	}
	reverted, err := r.DownTo(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(reverted) != 1 || reverted[0].Version != 3 || len(reverted[0].Documents) != 1 || reverted[0].Documents[0].Count != 1 {
		t.Fatalf("reverted = %+v", reverted)
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1, 2) {
		t.Fatalf("ledger = %v", v)
	}
	idx := indexNames(t, users)
	if !idx["email_1"] || idx["contact.email_1"] {
		t.Errorf("indexes after down = %v, want email_1 back and contact.email_1 gone", idx)
	}
	var got bson.D
	if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: v3[0].Value}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if b, _ := bson.MarshalExtJSON(got[1:], false, false); string(b) != `{"name":"Ada","email":"ada@x"}` {
		t.Errorf("downgraded document = %s", b)
	}
	// The collMod sent reverts the validator to 0001's schema and level.
	mods := rec.Named("collMod")
	last := mods[len(mods)-1]
	if last.Lookup("collMod").StringValue() != "users" || last.Lookup("validationLevel").StringValue() != "strict" ||
		last.Lookup("validator", "$jsonSchema", "required").Array().String() != `["name","email"]` {
		t.Errorf("revert collMod = %s", last)
	}
}

func TestDownRefusesWithoutDowngrade(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	r := newRunner(t, db, samples(t))
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("orders").InsertOne(ctx, bson.D{{Key: "version", Value: 4}}); err != nil {
		t.Fatal(err)
	}
	_, err := r.Down(ctx)
	var de *runner.DowngradeError
	if !errors.As(err, &de) || err.Error() != "cannot revert 0004_order_currency_and_tags.yaml: 1 orders documents are at version 4 or above and the migration declares no downgrade for orders; add `downgrade:` steps to the file (allowed after applying: downgrades are not checksummed), or upgrade the code instead of reverting the schema; nothing was changed" {
		t.Fatalf("got %v", err)
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1, 2, 3, 4) {
		t.Fatalf("a refused down changed the ledger: %v", v)
	}
}

func TestPartialFailureSaysWhatWasDone(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	// An index named like the one 0001 creates, with other options.
	if _, err := db.Collection("users").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}, Options: options.Index().SetName("email_1")}); err != nil {
		t.Fatal(err)
	}
	_, err := newRunner(t, db, samples(t)).Up(ctx)
	var pe *runner.PartialError
	if !errors.As(err, &pe) {
		t.Fatalf("want a PartialError, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"apply 0001_create_users.yaml: users: createIndexes email_1 failed",
		"an index with the name \"email_1\" or the same keys already exists with other options",
		"done:\n    users: collMod (clientSideOnly)",
		"not done: nothing else",
		"migration 1 is not recorded as applied; fix the cause and run `mongomig up` again",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if v := ledgerVersions(t, db); len(v) != 0 {
		t.Fatalf("failed migration recorded: %v", v)
	}
	// Fixing the cause and rerunning finishes the work.
	if err := db.Collection("users").Indexes().DropOne(ctx, "email_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := newRunner(t, db, samples(t)).Up(ctx); err != nil {
		t.Fatal(err)
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1, 2, 3, 4) {
		t.Fatalf("ledger = %v", v)
	}
}

func TestStatus(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	r := newRunner(t, db, samples(t))
	if _, err := r.UpTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	users := db.Collection("users")
	_, err := users.InsertMany(ctx, []any{
		bson.D{{Key: "n", Value: 1}},
		bson.D{{Key: "version", Value: 3}},
		bson.D{{Key: "version", Value: int64(3)}},
		bson.D{{Key: "version", Value: "x"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Current != 3 || st.Latest != 4 || st.Pending != 1 || st.Drifted != 0 || st.Clean() {
		t.Errorf("status = %+v", st)
	}
	var u *runner.CollectionStatus
	for i := range st.Collections {
		if st.Collections[i].Name == "users" {
			u = &st.Collections[i]
		}
	}
	if u == nil || u.ValidatorFrom != 3 || u.Enforcement != "client-side only" || u.Level != "moderate" || u.CurrentVersion != 3 || u.TargetVersion != 3 {
		t.Fatalf("users status = %+v", u)
	}
	docs := u.Documents
	if len(docs) != 3 || docs[0].Version != 0 || docs[0].Count != 1 || docs[1].Version != 3 || docs[1].Count != 2 || docs[2].Invalid == "" {
		t.Errorf("users document versions = %+v", docs)
	}
}

func TestOptionsValidate(t *testing.T) {
	db := sandboxtest.Database(t, "app")
	for _, o := range []runner.Option{
		runner.WithLockLease(10 * time.Millisecond), runner.WithLockWait(-1), runner.WithLedgerCollection("system.x"),
		runner.WithLockCollection(""), runner.WithLogger(nil), runner.WithOwner(""),
	} {
		if _, err := runner.New(db, samples(t), o); err == nil {
			t.Error("invalid option accepted")
		}
	}
	if _, err := runner.New(db, fstest.MapFS{"0001_x.yaml": {Data: []byte("colections: {}")}}); err == nil || !strings.Contains(err.Error(), "0001_x.yaml:1:1") {
		t.Errorf("invalid files: %v", err)
	}
}

var (
	samples        = fixtures.Samples
	newRunner      = fixtures.NewRunner
	ledgerVersions = fixtures.LedgerVersions
)
