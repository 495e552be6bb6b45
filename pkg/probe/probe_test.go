package probe_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/probe"
)

func TestProbeSandbox(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	rec := &cmdlog.Recorder{}
	client := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor()))
	db := client.Database("app")
	if _, err := db.Collection("users").InsertOne(ctx, bson.D{{Key: "name", Value: "ada"}}); err != nil {
		t.Fatal(err)
	}

	r, err := probe.Probe(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if r.Server.FerretDBVersion == "" || r.Server.Version == "" {
		t.Errorf("server info %+v: want both the MongoDB and the FerretDB version", r.Server)
	}
	if r.Server.Topology != probe.TopologyStandalone {
		t.Errorf("topology = %q, want standalone", r.Server.Topology)
	}
	c := r.Capabilities
	if c.Validators.Available || !strings.Contains(c.Validators.Reason, "238") && !strings.Contains(c.Validators.Reason, "NotImplemented") {
		t.Errorf("validators = %+v, want unavailable with the server's NotImplemented answer", c.Validators)
	}
	if c.JSONSchemaQueries.Available || c.JSONSchemaQueries.Reason == "" {
		t.Errorf("$jsonSchema queries = %+v, want unavailable with a reason", c.JSONSchemaQueries)
	}
	if c.GuardedWrites.Available || !strings.Contains(c.GuardedWrites.Reason, "FerretDB v1") {
		t.Errorf("guarded writes = %+v, want unavailable on FerretDB v1, naming it", c.GuardedWrites)
	}
	if c.PipelineUpdates.Available || c.PipelineUpdates.Reason == "" {
		t.Errorf("pipeline updates = %+v, want unavailable with a reason", c.PipelineUpdates)
	}
	if c.Transactions.Available || c.Transactions.Reason == "" {
		t.Errorf("transactions = %+v, want unavailable with a reason", c.Transactions)
	}

	// The exact create command carries the validator, level and action.
	creates := rec.Named("create")
	if len(creates) < 1 {
		t.Fatal("no create command sent")
	}
	first := creates[0]
	name := first.Lookup("create").StringValue()
	if !strings.HasPrefix(name, "mongomig_probe_") {
		t.Errorf("probe created %q, want a mongomig_probe_ scratch collection", name)
	}
	wantValidator, _ := bson.Marshal(probe.ValidatorProbeSchema)
	if got := first.Lookup("validator").Document(); !bytes.Equal(got, wantValidator) {
		t.Errorf("create validator = %s, want %s", got, bson.Raw(wantValidator))
	}
	if lvl := first.Lookup("validationLevel").StringValue(); lvl != "strict" {
		t.Errorf("validationLevel = %q", lvl)
	}
	if act := first.Lookup("validationAction").StringValue(); act != "error" {
		t.Errorf("validationAction = %q", act)
	}

	// No side effects: user data untouched, scratch collection gone.
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != "users" {
		t.Errorf("collections after probe = %v, want only users", names)
	}
	if n, _ := db.Collection("users").CountDocuments(ctx, bson.D{}); n != 1 {
		t.Errorf("users has %d documents after probe, want 1", n)
	}
}

// TestProbeRealMongoDB runs the same probe against the server named by
// MONGOMIG_TEST_URI, where validators must be reported available and
// actually enforced.
func TestProbeRealMongoDB(t *testing.T) {
	uri := os.Getenv("MONGOMIG_TEST_URI")
	if uri == "" {
		t.Skip("MONGOMIG_TEST_URI is not set: no real MongoDB to probe (the sandbox case is TestProbeSandbox)")
	}
	ctx := context.Background()
	client := sandboxtest.Connect(t, uri)
	db := client.Database("mongomig_test_probe")
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	r, err := probe.Probe(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Capabilities.Validators.Available {
		t.Errorf("validators unavailable on %s: %s", r.Server.Version, r.Capabilities.Validators.Reason)
	}
	if !r.Capabilities.JSONSchemaQueries.Available {
		t.Errorf("$jsonSchema queries unavailable: %s", r.Capabilities.JSONSchemaQueries.Reason)
	}
	if !r.Capabilities.GuardedWrites.Available {
		t.Errorf("guarded writes unavailable on MongoDB: %s", r.Capabilities.GuardedWrites.Reason)
	}
	// Enforcement: the same validator the probe sends rejects a document
	// without x.
	coll := db.Collection("enforced")
	if err := db.CreateCollection(ctx, "enforced", options.CreateCollection().SetValidator(probe.ValidatorProbeSchema)); err != nil {
		t.Fatal(err)
	}
	_, err = coll.InsertOne(ctx, bson.D{{Key: "y", Value: 1}})
	var we mongo.WriteException
	if err == nil || !asWriteException(err, &we) {
		t.Errorf("insert violating the validator: err = %v, want a document validation failure", err)
	}
}

func asWriteException(err error, we *mongo.WriteException) bool {
	e, ok := err.(mongo.WriteException)
	if ok {
		*we = e
	}
	return ok
}
