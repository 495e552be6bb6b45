package probe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/validator"
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
	rec.Reset()

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

	if c.CreateKeepsOptions.Available || !strings.Contains(c.CreateKeepsOptions.Reason, "NotImplemented") {
		t.Errorf("create keeps options = %+v, want unavailable with the server's NotImplemented answer", c.CreateKeepsOptions)
	}
	if c.ChangeStreams.Available || !strings.Contains(c.ChangeStreams.Reason, "$changeStream") {
		t.Errorf("change streams = %+v, want unavailable with the server's answer", c.ChangeStreams)
	}
	// FerretDB v1 refuses validators: whether it knows a keyword is unknown.
	if k := c.Keywords; k.Known || len(k.Unsupported) != 0 || !strings.HasPrefix(k.Reason, "validators are unavailable (create with validator refused") {
		t.Errorf("keywords = %+v, want unknown because validators are unavailable", k)
	}

	// The exact create command carries the validator, level and action, in
	// the scratch database; after the refusal, a plain create.
	creates := rec.Named("create")
	if len(creates) != 2 {
		t.Fatalf("%d create commands, want the one with a validator and the plain one", len(creates))
	}
	scratch := pinCommand(t, creates[0], bson.D{
		{Key: "create", Value: "probe"},
		{Key: "validator", Value: probe.ValidatorProbeSchema()},
		{Key: "validationLevel", Value: "strict"},
		{Key: "validationAction", Value: "error"},
	})
	if !strings.HasPrefix(scratch, probe.ScratchPrefix) {
		t.Errorf("probe created its collection in %q, want a %s scratch database", scratch, probe.ScratchPrefix)
	}
	pinCommand(t, creates[1], bson.D{{Key: "create", Value: "probe"}})
	checkScratchOnly(t, rec, scratch)

	// No side effects: user data untouched, scratch database gone.
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
	checkScratchDropped(t, client, scratch)
}

// pinCommand checks that cmd starts with exactly want's fields, in order
// (the driver appends $db, lsid and the like), and returns its $db.
func pinCommand(t *testing.T, cmd bson.Raw, want bson.D) string {
	t.Helper()
	elems, err := cmd.Elements()
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		wantRaw, err := bson.Marshal(bson.D{w})
		if err != nil {
			t.Fatal(err)
		}
		var got bson.Raw
		if i < len(elems) {
			got, _ = bson.Marshal(bson.D{{Key: elems[i].Key(), Value: elems[i].Value()}})
		}
		if !bytes.Equal(got, wantRaw) {
			t.Errorf("command %s: field %d is %s, want %s", cmd, i, got, bson.Raw(wantRaw))
		}
	}
	for _, e := range elems[min(len(want), len(elems)):] {
		if !strings.HasPrefix(e.Key(), "$") && e.Key() != "lsid" && e.Key() != "txnNumber" {
			t.Errorf("command %s: field %s after the pinned ones", cmd, e.Key())
		}
	}
	db, _ := cmd.Lookup("$db").StringValueOK()
	return db
}

// checkScratchOnly: every command the probe sent went to admin (buildInfo,
// hello) or to the scratch database, never to the target database or any
// other.
func checkScratchOnly(t *testing.T, rec *cmdlog.Recorder, scratch string) {
	t.Helper()
	for _, cmd := range rec.All() {
		db, _ := cmd.Lookup("$db").StringValueOK()
		if db != "admin" && db != scratch {
			t.Errorf("probe sent %s to database %q", cmd, db)
		}
	}
	if drops := rec.Named("dropDatabase"); len(drops) != 1 || drops[0].Lookup("$db").StringValue() != scratch {
		t.Errorf("dropDatabase commands %v, want one, of %s", drops, scratch)
	}
}

// checkScratchDropped: the probe's scratch database is gone.
func checkScratchDropped(t *testing.T, client *mongo.Client, scratch string) {
	t.Helper()
	dbs, err := client.ListDatabaseNames(context.Background(), bson.D{{Key: "name", Value: scratch}})
	if err != nil {
		t.Fatal(err)
	}
	if len(dbs) != 0 {
		t.Errorf("scratch database left after the probe: %v", dbs)
	}
}

// TestProbeRealMongoDB runs the same probe against the server named by
// MONGOMIG_TEST_URI, where validators must be reported available and
// actually enforced, and the keywords the probe reports unsupported must be
// those a validator of the test's own refuses to work with.
func TestProbeRealMongoDB(t *testing.T) {
	uri := os.Getenv("MONGOMIG_TEST_URI")
	if uri == "" {
		t.Skip("MONGOMIG_TEST_URI is not set: no real MongoDB to probe (the sandbox case is TestProbeSandbox)")
	}
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	client := sandboxtest.Connect(t, uri, options.Client().SetMonitor(rec.Monitor()))
	db := client.Database("mongomig_test_probe")
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	r, err := probe.Probe(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	report, _ := json.MarshalIndent(r, "", "  ")
	t.Logf("probe of %s:\n%s", uri, report)
	if !r.Capabilities.Validators.Available {
		t.Errorf("validators unavailable on %s: %s", r.Server.Version, r.Capabilities.Validators.Reason)
	}
	if !r.Capabilities.JSONSchemaQueries.Available {
		t.Errorf("$jsonSchema queries unavailable: %s", r.Capabilities.JSONSchemaQueries.Reason)
	}
	if !r.Capabilities.GuardedWrites.Available {
		t.Errorf("guarded writes unavailable on MongoDB: %s", r.Capabilities.GuardedWrites.Reason)
	}
	kw := r.Capabilities.Keywords
	if !kw.Known {
		t.Errorf("keywords unknown on a server with validators: %s", kw.Reason)
	}
	checkProbeCommands(t, rec, client, &kw)
	checkKeywordsAgainstValidators(t, db, &kw)

	// Enforcement: the same validator the probe sends rejects a document
	// without x.
	coll := db.Collection("enforced")
	if err := db.CreateCollection(ctx, "enforced", options.CreateCollection().SetValidator(probe.ValidatorProbeSchema())); err != nil {
		t.Fatal(err)
	}
	_, err = coll.InsertOne(ctx, bson.D{{Key: "y", Value: 1}})
	var we mongo.WriteException
	if err == nil || !asWriteException(err, &we) {
		t.Errorf("insert violating the validator: err = %v, want a document validation failure", err)
	}
}

// checkProbeCommands pins the validator commands the probe sent on a server
// with validators: create and collMod of the scratch collection, one collMod
// with every keyword and alias, and one more for each the server does not
// enforce, alone.
func checkProbeCommands(t *testing.T, rec *cmdlog.Recorder, client *mongo.Client, kw *probe.KeywordSupport) {
	t.Helper()
	creates := rec.Named("create")
	if len(creates) < 1 {
		t.Fatal("no create command sent")
	}
	scratch := pinCommand(t, creates[0], bson.D{
		{Key: "create", Value: "probe"},
		{Key: "validator", Value: probe.ValidatorProbeSchema()},
		{Key: "validationLevel", Value: "strict"},
		{Key: "validationAction", Value: "error"},
	})
	if !strings.HasPrefix(scratch, probe.ScratchPrefix) {
		t.Errorf("probe created its collection in %q, want a %s scratch database", scratch, probe.ScratchPrefix)
	}
	mods := rec.Named("collMod")
	if len(mods) < 2 {
		t.Fatalf("%d collMod commands, want at least the scratch collection's and the keywords'", len(mods))
	}
	pinCommand(t, mods[0], bson.D{
		{Key: "collMod", Value: "probe"},
		{Key: "validator", Value: probe.ValidatorProbeSchema()},
		{Key: "validationLevel", Value: "moderate"},
		{Key: "validationAction", Value: "error"},
	})
	all := mods[1].Lookup("validator", "$jsonSchema", "properties").Document()
	fields, _ := all.Elements()
	if n := len(validator.Keywords) - 2 + len(validator.BSONTypes); len(fields) != n {
		t.Errorf("the keywords' collMod has %d properties, want %d (every keyword but the two encryption ones, every alias)", len(fields), n)
	}
	enum := bson.D{{Key: "k_enum", Value: bson.D{{Key: "enum", Value: bson.A{1, 2}}}}}
	// The validator's 51 properties are checked by count and by one of
	// them; the rest of the command exactly.
	pinCommand(t, mods[1], bson.D{
		{Key: "collMod", Value: "keywords"},
		{Key: "validator", Value: mods[1].Lookup("validator").Document()},
		{Key: "validationLevel", Value: "strict"},
		{Key: "validationAction", Value: "error"},
	})
	if keys, _ := mods[1].Lookup("validator").Document().Elements(); len(keys) != 1 || keys[0].Key() != "$jsonSchema" {
		t.Errorf("the keywords' validator is %s, want a $jsonSchema", mods[1].Lookup("validator"))
	}
	if got, want := all.Lookup("k_enum").Document(), mustMarshal(t, enum[0].Value); !bytes.Equal(got, want) {
		t.Errorf("k_enum = %s, want %s", got, bson.Raw(want))
	}
	alone := map[string]bool{}
	for _, m := range mods[2:] {
		props, _ := m.Lookup("validator", "$jsonSchema", "properties").Document().Elements()
		if len(props) == 1 {
			alone[props[0].Key()] = true
		}
	}
	for _, k := range kw.Unsupported {
		if !alone["k_"+k] {
			t.Errorf("%s reported unsupported without a collMod of it alone", k)
		}
	}
	for _, ty := range kw.UnsupportedTypes {
		if !alone["t_"+ty] {
			t.Errorf("bsonType %s reported unsupported without a collMod of it alone", ty)
		}
	}
	if slices.Contains(kw.Unsupported, "enum") {
		for _, m := range mods[2:] {
			if props, _ := m.Lookup("validator", "$jsonSchema", "properties").Document().Elements(); len(props) == 1 && props[0].Key() == "k_enum" {
				pinCommand(t, m, bson.D{
					{Key: "collMod", Value: "keywords"},
					{Key: "validator", Value: bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "properties", Value: enum}}}}},
					{Key: "validationLevel", Value: "strict"},
					{Key: "validationAction", Value: "error"},
				})
			}
		}
	}
	checkScratchOnly(t, rec, scratch)
	checkScratchDropped(t, client, scratch)
}

// checkKeywordsAgainstValidators measures, without the probe, whether four
// keywords work on the server: a validator of each, set with collMod on a
// collection of the test database, must accept a document that satisfies
// it and refuse one that violates it with 121. Where it does not (FerretDB
// 2 and DocumentDB refuse every write under a validator with enum, anyOf
// or additionalProperties, and answer bsonType number with code 2), the
// probe must report the keyword unsupported; where it does, supported.
func checkKeywordsAgainstValidators(t *testing.T, db *mongo.Database, kw *probe.KeywordSupport) {
	t.Helper()
	ctx := context.Background()
	for _, c := range []struct {
		keyword     string
		schema      bson.D
		valid, fail bson.D
	}{
		{"enum", bson.D{{Key: "s", Value: bson.D{{Key: "enum", Value: bson.A{"a", "b"}}}}}, bson.D{{Key: "s", Value: "a"}}, bson.D{{Key: "s", Value: "c"}}},
		{"anyOf", bson.D{{Key: "n", Value: bson.D{{Key: "anyOf", Value: bson.A{bson.D{{Key: "bsonType", Value: "int"}}, bson.D{{Key: "bsonType", Value: "string"}}}}}}}, bson.D{{Key: "n", Value: int32(1)}}, bson.D{{Key: "n", Value: 1.5}}},
		{"additionalProperties", bson.D{{Key: "o", Value: bson.D{{Key: "properties", Value: bson.D{{Key: "a", Value: bson.D{}}}}, {Key: "additionalProperties", Value: false}}}}, bson.D{{Key: "o", Value: bson.D{{Key: "a", Value: 1}}}}, bson.D{{Key: "o", Value: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 2}}}}},
		{"bsonType: number", bson.D{{Key: "n", Value: bson.D{{Key: "bsonType", Value: "number"}}}}, bson.D{{Key: "n", Value: int32(1)}}, bson.D{{Key: "n", Value: "s"}}},
	} {
		name := "kw_" + strings.NewReplacer(" ", "", ":", "_").Replace(c.keyword)
		if err := db.CreateCollection(ctx, name); err != nil {
			t.Fatal(err)
		}
		schema := bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "properties", Value: c.schema}}}}
		works := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: name}, {Key: "validator", Value: schema}}).Err() == nil
		if works {
			_, err := db.Collection(name).InsertOne(ctx, c.valid)
			works = err == nil
		}
		if works {
			_, err := db.Collection(name).InsertOne(ctx, c.fail)
			works = probe.ServerCode(err) == probe.CodeDocumentValidationFailure
		}
		raw := mustMarshal(t, bson.D{{Key: "properties", Value: c.schema}})
		reported := len(kw.Refused(raw)) > 0
		if works == reported {
			t.Errorf("%s: a validator with it works: %v; the probe reports it unsupported: %v (%+v)", c.keyword, works, reported, kw)
		}
	}
}

func mustMarshal(t *testing.T, v any) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func asWriteException(err error, we *mongo.WriteException) bool {
	e, ok := err.(mongo.WriteException)
	if ok {
		*we = e
	}
	return ok
}
