package runner_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/runner"
)

// server2Capabilities is what probe.Probe reports of the second test
// server (FerretDB 2.5 + DocumentDB; `mongomig info` there): validators
// enforced and read back, ten keywords and bsonType number not. The
// library's decisions are pinned against this value on the sandbox,
// which has no validators at all; TestUpRefusesUnenforceableOnMongoDB
// pins them against the probe of a real server.
var server2Capabilities = &probe.Capabilities{
	Validators:         probe.Capability{Available: true},
	CreateKeepsOptions: probe.Capability{Available: true},
	Keywords: probe.KeywordSupport{Known: true,
		Unsupported:      []string{"additionalProperties", "allOf", "anyOf", "dependencies", "enum", "maxProperties", "minProperties", "not", "oneOf", "patternProperties"},
		UnsupportedTypes: []string{"number"},
	},
}

// writeCommands are the recorded commands that write, but the lock's and
// ledger's reads.
func writeCommands(cmds []bson.Raw) []string {
	var out []string
	for _, c := range cmds {
		elems, err := c.Elements()
		if err != nil || len(elems) == 0 {
			continue
		}
		switch name := elems[0].Key(); name {
		case "insert", "update", "delete", "findAndModify", "create", "collMod", "createIndexes", "dropIndexes", "drop", "dropDatabase":
			out = append(out, name+" "+elems[0].Value().String())
		}
	}
	return out
}

// TestUpRefusesUnenforceableBeforeWriting: on a server that does not
// enforce enum and additionalProperties, up --dry-run and up refuse the
// samples naming each validator's file, collection and keywords, and up
// writes nothing, not even the lock.
func TestUpRefusesUnenforceableBeforeWriting(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	r := newRunner(t, db, samples(t), runner.WithCapabilities(server2Capabilities))
	want := []runner.UnenforceableValidator{
		{Collection: "orders", Version: 2, File: "0002_orders_and_blog.yaml", Keywords: []string{"additionalProperties", "enum"}},
		{Collection: "users", Version: 3, File: "0003_user_contact.yaml", Keywords: []string{"enum"}},
		{Collection: "orders", Version: 4, File: "0004_order_currency_and_tags.yaml", Keywords: []string{"additionalProperties", "enum"}},
	}
	check := func(what string, err error) {
		t.Helper()
		var ue *runner.UnenforceableError
		if !errors.As(err, &ue) {
			t.Fatalf("%s: %v, want an UnenforceableError", what, err)
		}
		for i := range ue.Validators {
			ue.Validators[i].Pos = migration.Pos{} // the samples' layout decides them
		}
		if !reflect.DeepEqual(ue.Validators, want) {
			t.Errorf("%s refused %+v, want %+v", what, ue.Validators, want)
		}
		if !strings.Contains(err.Error(), "0003_user_contact.yaml: users uses enum") {
			t.Errorf("%s: message %q", what, err)
		}
	}
	_, err := r.Plan(ctx, runner.Latest)
	check("plan", err)
	_, err = r.Up(ctx)
	check("up", err)
	if w := writeCommands(rec.All()); len(w) > 0 {
		t.Errorf("up wrote before refusing: %v", w)
	}
	if names, err := db.ListCollectionNames(ctx, bson.D{}); err != nil || len(names) > 0 {
		t.Errorf("collections after the refusal: %v (%v)", names, err)
	}
}

// TestUpClientSideValidatorsAsked: the validators of the collections
// named by WithClientSideValidators that use keywords the server does not
// enforce are not sent (create without one, collMod removing the
// server's), plan and run alike; the result and the ledger say
// client-side; their validators the server enforces are sent as usual.
func TestUpClientSideValidatorsAsked(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	r := newRunner(t, db, samples(t), runner.WithCapabilities(server2Capabilities), runner.WithClientSideValidators("orders", "users"))
	p, err := r.Plan(ctx, runner.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Migrations[1].Commands[0]; c.Collection != "orders" || string(c.Text) != `{"create":"orders"}` {
		t.Errorf("plan sends for orders %s %s, want a create without validator", c.Collection, c.Text)
	}
	if notes := strings.Join(p.Notes, "\n"); !strings.Contains(notes, "0002_orders_and_blog.yaml: orders: the server does not enforce this validator's keywords: it is applied client-side only, as asked") {
		t.Errorf("plan notes = %q", notes)
	}
	applied, err := r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 0001's users validator uses no refused keyword: sent (and refused by
	// the sandbox, which has no validators). 0003's is removed instead.
	sent := map[string]string{}
	for _, c := range append(rec.Named("create"), rec.Named("collMod")...) {
		elems, _ := c.Elements()
		coll := elems[0].Value().StringValue()
		v := "no validator"
		if val, ok := c.Lookup("validator").DocumentOK(); ok {
			v = "validator {}"
			if len(val) > 5 {
				v = "a validator"
			}
		}
		sent[elems[0].Key()+" "+coll] += v + ";"
	}
	for cmd, want := range map[string]string{
		"create users":   "a validator;no validator;", // 0001, then the sandbox's refusal's plain create
		"create orders":  "no validator;",
		"collMod users":  "validator {};",
		"collMod orders": "validator {};",
	} {
		if sent[cmd] != want {
			t.Errorf("%s sent with %q, want %q", cmd, sent[cmd], want)
		}
	}
	if got := strings.Join(applied.Applied[2].ClientSideValidators, ","); got != "users" {
		t.Errorf("0003 client-side = %q, want users", got)
	}
	var entry runner.LedgerEntry
	if err := db.Collection(runner.DefaultLedgerCollection).FindOne(ctx, bson.D{{Key: "_id", Value: 3}}).Decode(&entry); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(entry.ClientSideValidators, ","); got != "users" {
		t.Errorf("ledger of 0003 records client-side %q, want users", got)
	}
	st, err := r.StatusOf(ctx, runner.StatusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Collections {
		if c.Name == "users" && c.Enforcement != runner.EnforcementClientSide {
			t.Errorf("status of users: %q", c.Enforcement)
		}
	}
}

// TestUpRefusesUnenforceableOnMongoDB pins the refusal against the probe
// of a real server: the samples' enum is refused where the server does not
// enforce it (the second test server), and nothing is written to the
// target database.
func TestUpRefusesUnenforceableOnMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_enforce", "the refusal needs a server with validators to probe (its logic is checked on the sandbox by TestUpRefusesUnenforceableBeforeWriting)")
	ctx := context.Background()
	caps, err := probe.ValidatorSupport(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	enum := probe.RefusedKeywords(bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "enum", Value: bson.A{1}}}}}, &caps.Keywords)
	if len(enum) == 0 {
		t.Skipf("the server enforces enum (probed: %+v): nothing to refuse", caps.Keywords)
	}
	r := newRunner(t, db, fixtures.Samples(t))
	_, err = r.Up(ctx)
	var ue *runner.UnenforceableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "users uses enum") {
		t.Fatalf("up: %v, want an UnenforceableError naming users' enum", err)
	}
	if names, err := db.ListCollectionNames(ctx, bson.D{}); err != nil || len(names) > 0 {
		t.Errorf("collections of the target after the refusal: %v (%v)", names, err)
	}
	if _, err := r.Plan(ctx, runner.Latest); !errors.As(err, &ue) {
		t.Errorf("plan: %v, want an UnenforceableError", err)
	}
}

// TestStatusEnforcementFromServerMongoDB: status's enforcement column is
// what listCollections shows, not the ledger alone: a validator removed or
// replaced on the server behind mongomig's back is reported so.
func TestStatusEnforcementFromServerMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_enforcement", "needs a server that keeps validators (the sandbox refuses them: status says client-side only, TestStatusReportsCollections)")
	ctx := context.Background()
	fsys, refused := fixtures.EnforceableSamples(t, db)
	var asked []string
	for c := range refused {
		asked = append(asked, c)
	}
	r := newRunner(t, db, fsys, runner.WithClientSideValidators(asked...))
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	users := func() runner.CollectionStatus {
		t.Helper()
		st, err := r.StatusOf(ctx, runner.StatusOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range st.Collections {
			if c.Name == "users" {
				return c
			}
		}
		t.Fatal("no users in status")
		return runner.CollectionStatus{}
	}
	if c := users(); c.Enforcement != runner.EnforcementServer || c.Level != "moderate" || c.Action != "error" {
		t.Fatalf("users after up: %+v", c)
	}
	other := bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "required", Value: bson.A{"name"}}}}}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "users"}, {Key: "validator", Value: other}}).Err(); err != nil {
		t.Fatal(err)
	}
	if c := users(); c.Enforcement != runner.EnforcementDiffers || !strings.Contains(c.EnforcementNote, `"required"`) {
		t.Errorf("users with another validator: %q %q", c.Enforcement, c.EnforcementNote)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "users"}, {Key: "validator", Value: bson.D{}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if c := users(); c.Enforcement != runner.EnforcementAbsent {
		t.Errorf("users without validator on the server: %q %q", c.Enforcement, c.EnforcementNote)
	}
}
