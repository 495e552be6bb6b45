package runner_test

import (
	"context"
	"fmt"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/report"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
	"github.com/mongomig/mongomig/pkg/version/versiontest"
)

// hostileFS upgrades users to version 1 with server-side steps only, so
// the server-side backfill takes the whole chain.
var hostileFS = fstest.MapFS{"0001_users.yaml": {Data: []byte(`collections:
  users:
    validator:
      $jsonSchema: {bsonType: object}
    upgrade:
      - rename: {a: b}
      - set: {c: 1}
`)}}

// hostileDoc is one stored document and whether the rule makes it
// invalid (a counted failure, never written).
type hostileDoc struct {
	name    string
	doc     bson.D
	invalid bool
	current bool // at version 1 already: left alone
}

// hostileDocs is versiontest.StoredVersions as the sandbox can store it,
// plus forged step markers on version-0 documents.
func hostileDocs(mongodb bool) []hostileDoc {
	var out []hostileDoc
	for i, s := range versiontest.StoredVersions {
		if s.Sandbox || mongodb {
			out = append(out, hostileDoc{s.Name, s.Doc(int32(i)), !s.Valid, s.Valid && s.Version == 1})
		}
	}
	for i, m := range []any{int32(1), int32(0), bson.D{{Key: "step", Value: int32(1)}}} {
		out = append(out, hostileDoc{fmt.Sprintf("marker %v", m), bson.D{{Key: "_id", Value: int32(100 + i)}, {Key: "a", Value: "x"}, {Key: version.MarkerField, Value: m}}, true, false})
	}
	if mongodb {
		// MongoDB stores a repeated field as sent; FerretDB refuses it.
		out = append(out, hostileDoc{"version twice", bson.D{{Key: "_id", Value: int32(200)}, {Key: "version", Value: int32(1)}, {Key: "a", Value: "x"}, {Key: "version", Value: int32(0)}}, true, false})
	}
	return out
}

// TestBackfillHostileStoredDocuments: through
// the backfill (server-side and client-side), status and validate: every
// invalid version (negative, fractional, array, other types) and every
// forged step marker is a counted failure naming its _id, left exactly as
// stored, counted invalid by status and validate, and keeps the
// collection unproven; every valid document below the target is upgraded.
// The server-side path used to upgrade version: [0, 5] (its filter
// {version: 0} matched the array's element), the client path upgraded -1
// as if it were 0, and a marker of 1 skipped the rename.
func TestBackfillHostileStoredDocuments(t *testing.T) {
	for _, mode := range hostileModes {
		t.Run(mode.name, func(t *testing.T) {
			checkHostile(t, sandboxtest.Database(t, "app"), mode.opts, false)
		})
	}
}

// TestBackfillHostileStoredDocumentsMongoDB is the same on a real MongoDB,
// with a Decimal128 version and a repeated version field, which the
// sandbox cannot store.
func TestBackfillHostileStoredDocumentsMongoDB(t *testing.T) {
	for _, mode := range hostileModes {
		t.Run(mode.name, func(t *testing.T) {
			checkHostile(t, sandboxtest.MongoDB(t, "mongomig_test_hostile", "TestBackfillHostileStoredDocuments covers the sandbox"), mode.opts, true)
		})
	}
}

var hostileModes = []struct {
	name string
	opts backfill.Options
}{{"ServerSide", backfill.Options{ServerSide: true, AssumeNoWriters: true}}, {"ClientSide", backfill.Options{ClientSide: true}}}

func checkHostile(t *testing.T, db *mongo.Database, opts backfill.Options, mongodb bool) {
	ctx := context.Background()
	r := newRunner(t, db, hostileFS)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	docs := hostileDocs(mongodb)
	invalid, dups := int64(0), int64(0)
	for _, h := range docs {
		raw, err := bson.Marshal(h.doc) // raw keeps a repeated field
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Collection("users").InsertOne(ctx, bson.Raw(raw), options.InsertOne().SetBypassDocumentValidation(true)); err != nil {
			t.Fatalf("%s: %v", h.name, err)
		}
		if h.invalid {
			invalid++
		}
		if h.name == "version twice" {
			dups++
		}
	}
	// A server whose matcher reads only the first of a repeated field
	// (MongoDB's: src/mongo/db/matcher/path_internal.cpp reads a field
	// with BSONObj::getField, the first of that name) takes "version
	// twice" (1, then 0) for a current document: no backfill filter
	// selects it, so it is left as stored and not counted (the lazy path
	// refuses it, see pkg/version's TestDuplicateVersionKeys).
	unseen := ""
	if dups > 0 && !matchesSecondCopy(t, db) {
		unseen = "200"
	}
	res, err := backfill.Run(ctx, r, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Collections[0]
	failedIDs := map[string]bool{}
	failed := int64(0)
	for _, g := range c.Failed {
		failed += g.Count
		for _, id := range g.ExampleIDs {
			failedIDs[id] = true
		}
	}
	wantFailed := invalid
	if unseen != "" {
		wantFailed--
		if failedIDs[unseen] {
			t.Errorf("the repeated version field was counted although the server's filters take it for current")
		}
	}
	if failed != wantFailed || c.Proven || !res.FailuresRemain() {
		t.Errorf("%d failures (want %d), proven %v, failures remain %v: %+v", failed, wantFailed, c.Proven, res.FailuresRemain(), c.Failed)
	}
	for _, h := range docs {
		stored := findUser(t, db, h.doc[0].Value)
		if h.invalid || h.current {
			if js(stored) != js(h.doc) {
				t.Errorf("%s: rewritten to %s (inserted as %s)", h.name, js(stored), js(h.doc))
			}
			// Groups list a few _ids each (the count covers the rest).
			if h.invalid {
				delete(failedIDs, fmt.Sprint(h.doc[0].Value))
			}
			continue
		}
		if v, err := r.Registry().VersionOf("users", stored); err != nil || v != 1 || lookupMissing(stored, "b") {
			t.Errorf("%s: not upgraded: %s", h.name, js(stored))
		}
	}
	if len(failedIDs) > 0 {
		t.Errorf("failures list _ids of documents that are not invalid: %v", failedIDs)
	}
	checkInvalidCounts(t, db, r, invalid, dups)
}

// checkInvalidCounts requires status and validate to count invalid
// documents that hold a version field (forged markers sit on valid
// version-0 documents, which validate counts at 0 as stored); status
// counts a repeated field as the copy the server's $group reads.
func checkInvalidCounts(t *testing.T, db *mongo.Database, r *runner.Runner, invalid, dups int64) {
	t.Helper()
	ctx := context.Background()
	markers := int64(3)
	st, err := r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var stInvalid int64
	for _, cs := range st.Collections {
		for _, vc := range cs.Documents {
			if vc.Invalid != "" {
				stInvalid += vc.Count
			}
		}
	}
	rp, err := report.New(db, r.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := rp.Validate(ctx, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var repInvalid int64
	for _, cr := range rep.Collections {
		for _, vc := range cr.Versions {
			if vc.Invalid != "" {
				repInvalid += vc.Count
			}
		}
	}
	if stInvalid != invalid-markers-dups || repInvalid != invalid-markers {
		t.Errorf("invalid versions: status %d (want %d), validate %d (want %d)", stInvalid, invalid-markers-dups, repInvalid, invalid-markers)
	}
}

func findUser(t *testing.T, db *mongo.Database, id any) bson.D {
	t.Helper()
	var d bson.D
	if err := db.Collection("users").FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		t.Fatal(err)
	}
	return d
}

func lookupMissing(d bson.D, key string) bool {
	_, ok := bsonx.Lookup(d, key)
	return !ok
}

func js(d bson.D) string {
	b, _ := bson.MarshalExtJSON(d, true, false)
	return string(b)
}

// matchesSecondCopy reports whether the server's filters see the second
// copy of a repeated field: {version: 0} against the stored "version
// twice" document (1, then 0).
func matchesSecondCopy(t *testing.T, db *mongo.Database) bool {
	t.Helper()
	n, err := db.Collection("users").CountDocuments(context.Background(), bson.D{{Key: "_id", Value: int32(200)}, {Key: "version", Value: int32(0)}})
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}
