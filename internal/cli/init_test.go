package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// TestInitCommand: init writes the next numbered baseline, names the
// mixed-type fields with example _ids, never overwrites, and its file
// lints and validates through the same CLI.
func TestInitCommand(t *testing.T) {
	tmp := t.TempDir()
	sb, dir := filepath.Join(tmp, "sandbox"), filepath.Join(tmp, "migrations")
	ids := thingsWithMixedPrice(t, sb)
	r := run(t, false, "--embedded", sb, "--dir", dir, "init")
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	file := filepath.Join(dir, "0001_baseline.yaml")
	for _, want := range []string{
		"wrote " + file + " (database app)",
		"things  4 documents  0 indexes  1 mixed-type field",
		`things.price: double 3, string 1 (string: _id {"$oid":"` + ids[2].Hex() + `"})`,
		"validationAction warn: the server logs writes that fail the schema and rejects none",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), "price: {bsonType: [int, long, double, string]}") {
		t.Fatalf("%s: %v\n%s", file, err, b)
	}
	if r := run(t, false, "--dir", dir, "lint"); r.code != ExitOK || !strings.Contains(r.stdout, "0 errors, 0 warnings") {
		t.Errorf("lint: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, false, "--embedded", sb, "--dir", dir, "validate"); r.code != ExitOK || !strings.Contains(r.stdout, "all documents pass") {
		t.Errorf("validate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// --out never overwrites; an unknown collection is a usage error.
	if r := run(t, false, "--embedded", sb, "init", "--out", file); r.code != ExitUsage || !strings.Contains(r.stderr, "already exists: init never overwrites") {
		t.Errorf("--out existing: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, false, "--embedded", sb, "--dir", dir, "init", "--collection", "thing"); r.code != ExitUsage || !strings.Contains(r.stderr, "thing does not exist; the database has things") {
		t.Errorf("--collection thing: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, false, "init", "--enum-max", "-1"); r.code != ExitUsage {
		t.Errorf("--enum-max -1: exit %d", r.code)
	}

	testInitAgain(t, sb, dir, tmp)
}

// testInitAgain: a second init numbers after the existing file, --json
// gives the data, --examples adds documents that lint.
func testInitAgain(t *testing.T, sb, dir, tmp string) {
	// The next run numbers after the existing file; --json gives the data.
	r := run(t, false, "--embedded", sb, "--dir", dir, "--json", "init", "--sample", "2")
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var got struct {
		File        string
		Collections []struct {
			Collection string
			Documents  int64
			Read       string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if got.File != filepath.Join(dir, "0002_baseline.yaml") || len(got.Collections) != 1 || got.Collections[0].Documents != 2 || got.Collections[0].Read != "first" {
		t.Errorf("json = %+v", got)
	}
	if !strings.Contains(r.stderr, "warning: the server has no $sample") {
		t.Errorf("stderr = %q", r.stderr)
	}

	// --examples: the first documents, which lint checks against the schema.
	exDir := filepath.Join(tmp, "with-examples")
	if r := run(t, false, "--embedded", sb, "init", "--examples", "3", "--out", filepath.Join(exDir, "0001_baseline.yaml")); r.code != ExitOK {
		t.Fatalf("--examples: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(exDir, "0001_baseline.yaml")); !strings.Contains(string(b), `"price": "2.50"`) {
		t.Errorf("no examples:\n%s", b)
	}
	if r := run(t, false, "--dir", exDir, "lint"); r.code != ExitOK || !strings.Contains(r.stdout, "0 errors, 0 warnings") {
		t.Errorf("lint with examples: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestInitJSONIndexes: --json gives each index as its createIndexes spec;
// an empty collection with an index gets its indexes only, and lints.
func TestInitJSONIndexes(t *testing.T) {
	sb := filepath.Join(t.TempDir(), "sandbox")
	sandboxtest.InDir(t, sb, "app", func(db *mongo.Database) {
		idx := mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: -1}}, Options: options.Index().SetUnique(true)}
		if _, err := db.Collection("things").Indexes().CreateOne(context.Background(), idx); err != nil {
			t.Fatal(err)
		}
	})
	dir := t.TempDir()
	r := run(t, false, "--embedded", sb, "--json", "init", "--out", filepath.Join(dir, "0001_b.yaml"))
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, `"indexes": [
        {
          "key": {
            "a": 1,
            "b": -1
          },
          "name": "a_1_b_-1",
          "unique": true
        }
      ]`) {
		t.Errorf("stdout = %s", r.stdout)
	}
	if !strings.Contains(r.stdout, `"read": "all"`) || !strings.Contains(r.stdout, `"documents": 0`) {
		t.Errorf("stdout = %s", r.stdout)
	}
	// (lint warns that a unique index on a field the schema does not
	// require fails to build on MongoDB with two documents lacking it:
	// true of an empty collection.)
	if r := run(t, false, "--dir", dir, "lint"); r.code != ExitOK || !strings.Contains(r.stdout, "0 errors, 1 warning") {
		t.Errorf("lint: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// thingsWithMixedPrice writes 4 things into the sandbox in sb; the third
// one's price is a string. It returns their _ids.
func thingsWithMixedPrice(t *testing.T, sb string) []bson.ObjectID {
	t.Helper()
	ids := []bson.ObjectID{bson.NewObjectID(), bson.NewObjectID(), bson.NewObjectID(), bson.NewObjectID()}
	sandboxtest.InDir(t, sb, "app", func(db *mongo.Database) {
		var docs []any
		for i, id := range ids {
			var price any = float64(i) + 0.5
			if i == 2 {
				price = "2.50"
			}
			docs = append(docs, bson.D{{Key: "_id", Value: id}, {Key: "price", Value: price}})
		}
		if _, err := db.Collection("things").InsertMany(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
	})
	return ids
}

// TestInitRefusesManagedDatabase (issue 26 item 4): init on a database
// whose ledger records applied migrations refuses (exit 2) and writes
// nothing; --allow-managed writes a baseline with a warning. Every init
// says how much of the file came from the data.
func TestInitRefusesManagedDatabase(t *testing.T) {
	tmp := t.TempDir()
	sb, dir := filepath.Join(tmp, "sandbox"), filepath.Join(tmp, "migrations")
	thingsWithMixedPrice(t, sb)
	r := run(t, false, "--embedded", sb, "--dir", dir, "init")
	if r.code != ExitOK || !strings.Contains(r.stderr, "warning: "+filepath.Join(dir, "0001_baseline.yaml")+" holds 0 enums (0 values), 2 property names taken from the documents' data: review them") {
		t.Fatalf("init: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, false, "--embedded", sb, "--dir", dir, "up"); r.code != ExitOK {
		t.Fatalf("up: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, false, "--embedded", sb, "--dir", dir, "init")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "database app is already managed by mongomig: its ledger (mongomig_migrations) records 1 applied migration, the last 0001_baseline.yaml") ||
		!strings.Contains(r.stderr, "wrote nothing") || !strings.Contains(r.stderr, "--allow-managed") {
		t.Errorf("init on a managed database: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "0002_baseline.yaml")); !os.IsNotExist(err) {
		t.Errorf("init on a managed database wrote a file: %v", err)
	}
	r = run(t, false, "--embedded", sb, "--dir", dir, "init", "--allow-managed", "--out", filepath.Join(tmp, "again.yaml"))
	if r.code != ExitOK || !strings.Contains(r.stderr, "--allow-managed: writing a baseline anyway") {
		t.Errorf("--allow-managed: exit %d\n%s", r.code, r.stderr)
	}
}

// TestInitRefusesOversizedBaseline (issue 25 item 9): a baseline larger
// than the --max-file-size lint and up read is not written (exit 1), and
// no partial or temporary file is left.
func TestInitRefusesOversizedBaseline(t *testing.T) {
	tmp := t.TempDir()
	sb, out := filepath.Join(tmp, "sandbox"), filepath.Join(tmp, "out")
	thingsWithMixedPrice(t, sb)
	r := run(t, false, "--embedded", sb, "--max-file-size", "200", "init", "--out", filepath.Join(out, "baseline.yaml"))
	if r.code != ExitFailure || !strings.Contains(r.stderr, "more than the limit of 200 bytes that lint and up read, so init wrote nothing") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	if entries, err := os.ReadDir(out); err != nil || len(entries) != 0 {
		t.Errorf("left in %s: %v %v", out, entries, err)
	}
}
