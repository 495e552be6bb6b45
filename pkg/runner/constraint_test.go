package runner_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/runner"
)

// constraintFS: 0001 a validator on accounts; 0002 upgrades them (a
// version: a window) and asks for validationLevel constraint; 0003
// changes the validator again (a collection at constraint must be lowered
// first).
func constraintFS() fstest.MapFS {
	return fstest.MapFS{
		"0001_accounts.yaml": {Data: []byte(`collections:
  accounts:
    validator: {$jsonSchema: {bsonType: object, required: [name]}}
`)},
		"0002_constraint.yaml": {Data: []byte(`collections:
  accounts:
    validator: {$jsonSchema: {bsonType: object, required: [name, plan]}}
    validationLevel: constraint
    upgrade:
      - set: {plan: free}
`)},
	}
}

// withConstraint is what the probe finds on MongoDB 9.0 (both settings
// available): given to the runner as the probe's result, never sent to a
// server that lacks them without the server answering.
var withConstraint = &probe.ValidationSettings{ErrorAndLog: probe.Capability{Available: true}, Constraint: probe.Capability{Available: true}}

// TestConstraintRefusedAtPlanTime, on the sandbox: constraint on a collection no migration upgrades is
// refused at plan time even where the server has it (no window closes),
// and where the probe finds the server without it the reason is the
// server's answer, nothing sent.
func TestConstraintRefusedAtPlanTime(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	unversioned := fstest.MapFS{"0001_a.yaml": {Data: []byte("collections:\n  a:\n    validator: {$jsonSchema: {required: [x]}}\n    validationLevel: constraint\n")}}
	_, err := newRunner(t, db, unversioned, runner.WithValidationSettings(withConstraint)).Plan(ctx, runner.Latest)
	var us *runner.UnsupportedSettingError
	if !errors.As(err, &us) || !strings.Contains(err.Error(), "no migration declares an upgrade for a") {
		t.Fatalf("plan = %v", err)
	}
	_, err = newRunner(t, db, constraintFS()).Plan(ctx, runner.Latest)
	if !errors.As(err, &us) || !strings.Contains(err.Error(), "0002_constraint.yaml:4:") || !strings.Contains(err.Error(), "the server does not have it (MongoDB 9.0 added it)") {
		t.Fatalf("plan on the sandbox (no constraint) = %v", err)
	}
	if names, _ := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: "accounts"}}); len(names) != 0 {
		t.Errorf("a refused plan created %v", names)
	}
}

// TestConstraintRaisedWhenWindowClosesMongoDB runs on the second server
// with the probe's result of MongoDB 9.0 given (the server itself has no
// constraint: the refusal it answers is the end of the test). up sends
// 0002's validator at strict (MongoDB refuses constraint in the collMod
// that changes the validator, and from any level but strict:
// checkValidationOptionsCanBeUsed,
// src/mongo/db/shard_role/shard_catalog/document_validation_helpers.cpp);
// after the backfill's proof the plan shows, after the tightening collMod,
// collMod prepareConstraintValidationLevel true and then collMod
// validationLevel constraint (the order that file requires), and up sends
// exactly those; the server's refusal of the first is a ConstraintError
// naming the collection, which stays strict with the plain schema.
func TestConstraintRaisedWhenWindowClosesMongoDB(t *testing.T) {
	sandboxtest.MongoDB(t, "mongomig_test_constraint", "the raise needs a server that holds validators (the plan-time refusals are in TestConstraintRefusedAtPlanTime)")
	rec := &cmdlog.Recorder{}
	db := sandboxtest.Connect(t, os.Getenv("MONGOMIG_TEST_URI"), options.Client().SetMonitor(rec.Monitor())).Database("mongomig_test_constraint")
	ctx := context.Background()
	if _, err := db.Collection("accounts").InsertMany(ctx, []any{bson.D{{Key: "name", Value: "a"}}, bson.D{{Key: "name", Value: "b"}}}); err != nil {
		t.Fatal(err)
	}
	// Probed, the server has no constraint: refused at plan time with its
	// answer, nothing sent.
	_, err := newRunner(t, db, constraintFS()).Plan(ctx, runner.Latest)
	var us *runner.UnsupportedSettingError
	if !errors.As(err, &us) || !strings.Contains(err.Error(), "0002_constraint.yaml:4:") || !strings.Contains(err.Error(), "the server does not have it (MongoDB 9.0 added it)") {
		t.Fatalf("plan on the second server = %v", err)
	}
	r := newRunner(t, db, constraintFS(), runner.WithValidationSettings(withConstraint))
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range rec.Named("collMod") {
		if c.Lookup("collMod").StringValue() != "accounts" {
			continue // the probe's, in its scratch database
		}
		if lvl, ok := c.Lookup("validationLevel").StringValueOK(); ok && lvl != "strict" {
			t.Errorf("up sent validationLevel %q with a validator: %s", lvl, c)
		}
	}
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"accounts"}}); err != nil {
		t.Fatal(err)
	}
	p, err := r.Plan(ctx, runner.Latest)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range p.Tighten {
		texts = append(texts, string(c.Text))
	}
	if len(texts) != 3 || !strings.Contains(texts[0], `"validator"`) ||
		texts[1] != `{"collMod":"accounts","prepareConstraintValidationLevel":true}` ||
		texts[2] != `{"collMod":"accounts","validationLevel":"constraint"}` {
		t.Fatalf("plan's tightening = %q", texts)
	}
	rec.Reset()
	_, err = r.Up(ctx)
	var ce *runner.ConstraintError
	if !errors.As(err, &ce) || ce.Collection != "accounts" {
		t.Fatalf("up = %v, want the server's refusal as a ConstraintError", err)
	}
	var mods []bson.Raw
	for _, c := range rec.Named("collMod") {
		if c.Lookup("collMod").StringValue() == "accounts" {
			mods = append(mods, c)
		}
	}
	if len(mods) != 2 || mods[0].Lookup("validator").Type == 0 || mods[0].Lookup("validationLevel").Type != 0 ||
		mods[1].Lookup("prepareConstraintValidationLevel").Boolean() != true || len(sentFields(t, mods[1])) != 2 { // collMod and the flag alone
		t.Fatalf("up sent %v", mods)
	}
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "accounts"}})
	if err != nil || len(specs) != 1 || specs[0].Options.Lookup("validationLevel").StringValue() != "strict" {
		t.Fatalf("accounts after the refusal: %v %v", specs, err)
	}
	st, err := r.Status(ctx)
	if err != nil || collStatus(st, "accounts").Window != "closed" {
		t.Fatalf("accounts window = %q, %v", collStatus(st, "accounts").Window, err)
	}
	if len(st.Lifecycle) != 1 || st.Lifecycle[0].Name != "accounts" || st.Lifecycle[0].ValidationLevel != "strict" || !st.Lifecycle[0].DeclaredConstraint || st.Lifecycle[0].Prepared {
		t.Errorf("status lifecycle = %+v, want accounts held strict with constraint declared", st.Lifecycle)
	}
}

// sentFields are the keys of a recorded command but the driver's (lsid,
// $db, $clusterTime...).
func sentFields(t *testing.T, raw bson.Raw) []string {
	t.Helper()
	es, err := raw.Elements()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range es {
		if k := e.Key(); k != "lsid" && !strings.HasPrefix(k, "$") {
			keys = append(keys, k)
		}
	}
	return keys
}
