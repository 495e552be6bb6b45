package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// TestStatusTable: with a collection name and a file name longer than any
// fixed width, every column still starts at the same place on each line,
// no line ends in spaces, and the version column says what it is.
func TestStatusTable(t *testing.T) {
	dir := sampleSandbox(t)
	migs := copySamples(t)
	long := "description: A collection with a long name.\ncollections:\n  audit_events_of_the_billing_subsystem:\n" +
		"    validator:\n      $jsonSchema: {bsonType: object, required: [kind]}\n    upgrade:\n      - default: {kind: unknown}\n"
	if err := os.WriteFile(filepath.Join(migs, "0005_add_audit_events_of_the_billing_subsystem.yaml"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(a ...string) []string { return append([]string{"--embedded", dir, "--dir", migs}, a...) }
	if r := run(t, false, args("up", "--to", "3")...); r.code != ExitOK {
		t.Fatalf("up --to 3: exit %d\n%s", r.code, r.stderr)
	}
	r := run(t, false, args("status", "--counts")...)
	if r.code != ExitOK {
		t.Fatalf("status: exit %d\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	for _, l := range lines {
		if strings.HasSuffix(l, " ") {
			t.Errorf("line ends in spaces: %q", l)
		}
	}
	date := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:`)
	at := -1
	var header string
	var rows []string
	for i, l := range lines {
		if loc := date.FindStringIndex(l); loc != nil {
			if at >= 0 && loc[0] != at {
				t.Errorf("the applied-at column starts at %d on %q, %d above", loc[0], l, at)
			}
			at = loc[0]
		}
		if strings.HasPrefix(strings.TrimSpace(l), "collection ") {
			header, rows = l, lines[i+1:]
			// The table ends at the next section ("deploy").
			for j, row := range rows {
				if !strings.HasPrefix(row, "  ") {
					rows = rows[:j]
					break
				}
			}
		}
	}
	if at < 0 || header == "" || len(rows) != 5 {
		t.Fatalf("no applied-at column or no collection table:\n%s", r.stdout)
	}
	for _, col := range []string{"validator", "documents", "upgrade target"} {
		x := strings.Index(header, col)
		for _, row := range rows {
			if len(row) <= x || row[x-2:x] != "  " || row[x] == ' ' {
				t.Errorf("column %q (at %d) misaligned in %q", col, x, row)
			}
		}
	}
	for _, want := range []string{"audit_events_of_the_billing_subsystem  none  ", "v0: 40     v3\n", "v0 (v5 with the pending migrations)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "current version") {
		t.Errorf("status still labels the upgrade target \"current version\":\n%s", r.stdout)
	}
}

// TestStatusQuotesLedgerFileNames: the ledger is data anyone with write
// access to the database can edit; a file name there with an escape
// sequence or a newline must not colour the terminal or forge a line
// (issue 17, finding 10).
func TestStatusQuotesLedgerFileNames(t *testing.T) {
	dir := sampleSandbox(t)
	migs := copySamples(t)
	args := func(a ...string) []string { return append([]string{"--embedded", dir, "--dir", migs}, a...) }
	if r := run(t, false, args("up")...); r.code != ExitOK {
		t.Fatalf("up: exit %d\n%s", r.code, r.stderr)
	}
	forged := "0004_\x1b[31mred\n0009_forged.yaml: error: forged line"
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		if _, err := db.Collection("mongomig_migrations").UpdateOne(context.Background(), bson.D{{Key: "_id", Value: 4}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "file", Value: forged}}}}); err != nil {
			t.Fatal(err)
		}
	})
	// The file is gone: status can only name it from the ledger.
	if err := os.Remove(filepath.Join(migs, "0004_order_currency_and_tags.yaml")); err != nil {
		t.Fatal(err)
	}
	r := run(t, false, args("status")...)
	out := r.stdout + r.stderr
	if strings.Contains(out, "\x1b") || strings.Contains(out, "\n0009_forged.yaml") {
		t.Fatalf("status printed the ledger's file name raw (exit %d):\n%q", r.code, out)
	}
	if !strings.Contains(out, `"0004_\x1b[31mred\n0009_forged.yaml: error: forged line"`) {
		t.Fatalf("status does not show the ledger's file name quoted (exit %d):\n%s", r.code, out)
	}
}

// copySamples copies the sample migrations into a new directory.
func copySamples(t *testing.T) string {
	t.Helper()
	migs := t.TempDir()
	files, _ := filepath.Glob("../../migrations/*.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(migs, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return migs
}
