package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// sampleSandbox returns a sandbox directory holding the sample data at
// version 0.
func sampleSandbox(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		if _, err := sampledata.Load(context.Background(), db, 1); err != nil {
			t.Fatal(err)
		}
	})
	return dir
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./internal/cli -run %s -update to accept):\n%s", name, t.Name(), got)
	}
}

// TestReportFormats renders the sample data's report in every format and
// compares it with the golden files; each exits 3 (documents would be
// rejected by validators whose action is error).
func TestReportFormats(t *testing.T) {
	dir := sampleSandbox(t)
	for _, f := range []struct{ format, file string }{
		{"text", "report.text.golden"}, {"json", "report.json.golden"},
		{"markdown", "report.md.golden"}, {"junit", "report.junit.golden"},
	} {
		t.Run(f.format, func(t *testing.T) {
			r := run(t, false, sandboxArgs(dir, "validate", "--format", f.format)...)
			if r.code != ExitCheck {
				t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
			}
			golden(t, f.file, r.stdout)
		})
	}
	// --out writes the file; --collection limits; --sample reads the first N.
	out := filepath.Join(t.TempDir(), "r.json")
	r := run(t, false, sandboxArgs(dir, "validate", "--format", "json", "--out", out, "--collection", "users", "--sample", "10")...)
	if r.code != ExitCheck || r.stdout != "" || !strings.Contains(r.stderr, "report written to "+out) {
		t.Fatalf("--out: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	data, _ := os.ReadFile(out)
	var rep struct {
		Collections []struct {
			Collection string `json:"collection"`
			Scanned    int64  `json:"scanned"`
			Failing    int64  `json:"failing"`
		} `json:"collections"`
	}
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Collections) != 1 || rep.Collections[0].Scanned != 10 || rep.Collections[0].Failing != 1 {
		t.Errorf("--out file: %v\n%s", err, data)
	}
	if r := run(t, false, sandboxArgs(dir, "validate", "--format", "yaml")...); r.code != ExitUsage || !strings.Contains(r.stderr, `unknown --format "yaml"`) {
		t.Errorf("bad format: exit %d %s", r.code, r.stderr)
	}
	// Only comments (action warn): failures but exit 0.
	if r := run(t, false, sandboxArgs(dir, "validate", "--collection", "comments")...); r.code != 0 || !strings.Contains(r.stdout, "WARN body  minLength") {
		t.Errorf("warn only: exit %d\n%s", r.code, r.stdout)
	}
}

// TestDryRunReport: up --dry-run shows the plan and the report, exits 3,
// and changes nothing.
func TestDryRunReport(t *testing.T) {
	dir := sampleSandbox(t)
	r := run(t, false, sandboxArgs(dir, "up", "--dry-run")...)
	if r.code != ExitCheck {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"would apply 4 migrations",
		"validation report database app: 4 documents would fail (4 collections checked)",
		"FAIL contact  required  2 documents: is required but missing",
		`e.g. {"$oid":"650100000000000000000007"}, {"$oid":"650100000000000000000017"}`,
		"FAIL items.0.qty  minimum  1 document: must be >= 1",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run lacks %q", want)
		}
	}
	r = run(t, false, sandboxArgs(dir, "--json", "up", "--dry-run")...)
	var res struct {
		Plan   struct{ Migrations []any } `json:"plan"`
		Report struct{ Failing int64 }    `json:"report"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Plan.Migrations) != 4 || res.Report.Failing != 4 {
		t.Errorf("--json dry run: %v\n%s", err, r.stdout)
	}
	if r := run(t, false, sandboxArgs(dir, "status", "--check")...); r.code != ExitCheck || !strings.Contains(r.stdout, "4 pending") {
		t.Errorf("the dry run changed something: %s", r.stdout)
	}
}

// TestReportJSONCarriesValues: in every --json output that shows a command
// or an _id (up --dry-run, validate, status), it is a JSON value, not a
// string holding JSON.
func TestReportJSONCarriesValues(t *testing.T) {
	dir := sampleSandbox(t)
	r := run(t, false, sandboxArgs(dir, "--json", "up", "--dry-run")...)
	var dry struct {
		Plan struct {
			Migrations []struct{ Commands []struct{ Command any } }
		}
		Report struct {
			Collections []struct{ Failures []struct{ ExampleIDs []any } }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &dry); err != nil || len(dry.Plan.Migrations) == 0 || len(dry.Report.Collections) == 0 {
		t.Fatalf("up --dry-run --json: %v\n%s", err, r.stdout)
	}
	if cmd, ok := dry.Plan.Migrations[0].Commands[0].Command.(map[string]any); !ok || cmd["collMod"] != "users" {
		t.Errorf("plan command = %#v, want the command document", dry.Plan.Migrations[0].Commands[0].Command)
	}
	if id, ok := dry.Report.Collections[0].Failures[0].ExampleIDs[0].(map[string]any); !ok || id["$oid"] != "650400000000000000000005" {
		t.Errorf("exampleIds[0] = %#v, want {\"$oid\": ...}", dry.Report.Collections[0].Failures[0].ExampleIDs[0])
	}
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		if _, err := db.Collection("users").InsertOne(context.Background(), bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "v"}, {Key: "version", Value: "abc"}}); err != nil {
			t.Fatal(err)
		}
	})
	r = run(t, false, sandboxArgs(dir, "--json", "status", "--counts")...)
	if !strings.Contains(r.stdout, `"invalid": "abc"`) {
		t.Errorf("status --json: the invalid version is not the value \"abc\":\n%s", r.stdout)
	}
	r = run(t, false, sandboxArgs(dir, "--json", "validate", "--collection", "users")...)
	if !strings.Contains(r.stdout, `"invalid": "abc"`) || !strings.Contains(r.stdout, "\"exampleIds\": [\n            1\n") {
		t.Errorf("validate --json: the invalid version or the _id 1 is not a JSON value:\n%s", r.stdout)
	}
}

// TestReportCrossCheckNotAvailable: a collection that does not exist gets
// no verdict from the server cross-check, in any format.
func TestReportCrossCheckNotAvailable(t *testing.T) {
	dir := t.TempDir()
	want := "not available (the collection does not exist: nothing to compare)"
	for _, format := range []string{"text", "markdown", "junit"} {
		r := run(t, false, sandboxArgs(dir, "validate", "--collection", "users", "--format", format)...)
		if r.code != ExitOK || !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "agrees") {
			t.Errorf("%s: exit %d, want %q and no agreement:\n%s%s", format, r.code, want, r.stdout, r.stderr)
		}
	}
}

// TestReportAllIDs: a report shows the smallest five _ids of a failure;
// --all-ids lists every one, in every format.
func TestReportAllIDs(t *testing.T) {
	dir := sampleSandbox(t)
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		for i := 0; i < 6; i++ {
			if _, err := db.Collection("users").InsertOne(context.Background(), bson.D{{Key: "_id", Value: fmt.Sprintf("noemail%d", i)}, {Key: "name", Value: "n"}}); err != nil {
				t.Fatal(err)
			}
		}
	})
	r := run(t, false, sandboxArgs(dir, "validate", "--collection", "users")...)
	if !strings.Contains(r.stdout, "8 documents") || strings.Count(r.stdout, `"noemail`) != 5 {
		t.Errorf("default: want 8 failing and 5 ids (strings sort before ObjectIds, as in MongoDB):\n%s", r.stdout)
	}
	for _, format := range []string{"text", "json", "markdown", "junit"} {
		r := run(t, false, sandboxArgs(dir, "validate", "--collection", "users", "--all-ids", "--format", format)...)
		if n := strings.Count(r.stdout, "noemail"); n != 6 || r.code != ExitCheck {
			t.Errorf("--all-ids --format %s: exit %d, %d of 6 string ids:\n%s%s", format, r.code, n, r.stdout, r.stderr)
		}
	}
}
