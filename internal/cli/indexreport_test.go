package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/report"
)

// TestDryRunIndexCollisions: accounts 98, 99 and 100 repeat the emails of
// 1, 2 and 3. In every format the dry run names both _ids of each
// colliding key, so a user can find the pairs, and exits 3; the key
// values (production data, issue 25 item 5) only with --show-values (the
// golden files hold that whole output).
func TestDryRunIndexCollisions(t *testing.T) {
	dir := t.TempDir()
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		var docs []any
		for i := 1; i <= 10; i++ {
			docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "email", Value: fmt.Sprintf("u%d@example.com", i)}})
		}
		for i := 1; i <= 3; i++ {
			docs = append(docs, bson.D{{Key: "_id", Value: 97 + i}, {Key: "email", Value: fmt.Sprintf("u%d@example.com", i)}})
		}
		if _, err := db.Collection("accounts").InsertMany(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
	})
	migs := t.TempDir()
	if err := os.WriteFile(filepath.Join(migs, "0001_unique_email.yaml"), []byte(`description: Emails are unique.
collections:
  accounts:
    indexes:
      create:
        - {keys: {email: 1}, unique: true}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ format, file string }{
		{"text", "dryrun-index.text.golden"}, {"json", "dryrun-index.json.golden"},
		{"markdown", "dryrun-index.md.golden"}, {"junit", "dryrun-index.junit.golden"},
	} {
		t.Run(f.format, func(t *testing.T) {
			hidden := run(t, false, "--embedded", dir, "--dir", migs, "up", "--dry-run", "--format", f.format)
			if hidden.code != ExitCheck || strings.Contains(hidden.stdout, "@example.com") || !strings.Contains(hidden.stdout, "98") {
				t.Errorf("without --show-values: exit %d, want 3 with the _ids and no key value:\n%s", hidden.code, hidden.stdout)
			}
			r := run(t, false, "--embedded", dir, "--dir", migs, "up", "--dry-run", "--show-values", "--format", f.format)
			if r.code != ExitCheck {
				t.Fatalf("exit %d, want 3\n%s%s", r.code, r.stdout, r.stderr)
			}
			for i := 1; i <= 3; i++ {
				key := fmt.Sprintf(`{"email":"u%d@example.com"}`, i)
				if f.format == "junit" {
					key = strings.ReplaceAll(key, `"`, "&#34;")
				}
				pair := fmt.Sprintf("_ids %d, %d", i, 97+i)
				if f.format == "markdown" {
					pair = fmt.Sprintf("_ids `%d`, `%d`", i, 97+i)
				}
				if f.format != "json" && !strings.Contains(r.stdout, key+"`: "+pair) && !strings.Contains(r.stdout, key+": "+pair) {
					t.Errorf("the output does not name the key %s with %s", key, pair)
				}
			}
			golden(t, f.file, r.stdout)
		})
	}
}

// TestIndexCollisionsBeyondTheCaps: a build details 5 keys and 5 _ids a
// key; the text says how many more there are of each.
func TestIndexCollisionsBeyondTheCaps(t *testing.T) {
	b := report.IndexBuild{Collection: "accounts", Index: "email_1", File: "0001_unique_email.yaml", Duplicates: 13, CollidingKeys: 7,
		Collisions: []report.IndexCollision{{Key: `{"email":"a"}`, Count: 8, IDs: []report.ExtJSON{"1", "2", "3", "4", "5"}}}}
	var buf bytes.Buffer
	renderIndexBuilds(&output{out: &buf}, []report.IndexBuild{b})
	for _, want := range []string{`key {"email":"a"}: _ids 1, 2, 3, 4, 5 and 3 more`, "and 6 more colliding keys"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestMDCode: a value with backticks stays one code span (CommonMark: a
// span's delimiters are a backtick run no other run inside equals), pipes
// escaped for the table.
func TestMDCode(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`: "`{\"a\":1}`",
		"x`y``z|": "``` x`y``z\\| ```",
	} {
		if got := mdCode(in); got != want {
			t.Errorf("mdCode(%q) = %q, want %q", in, got, want)
		}
	}
}
