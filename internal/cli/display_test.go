package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/runner"
)

// forged is a string a database or a file may hold: an escape sequence
// (colour, window title), a zero-width space, a direction override, and a
// newline followed by a line mongomig could have printed.
const forged = "evil\x1b[31m\x1b]0;pwned\x07\u200b\u202e\nmongomig: the database is at version 9 of 9"

// rawControl reports what of s a terminal would obey or render as a line
// of its own: a control character other than the newlines mongomig
// writes itself, a format character, or the forged line.
func rawControl(s string) string {
	for _, r := range s {
		if r != '\n' && unsafeRune(r) {
			return fmt.Sprintf("U+%04X", r)
		}
	}
	if strings.Contains(s, "\nmongomig: the database is at version 9") {
		return "the forged line"
	}
	return ""
}

// TestDisplayEscapes: display writes every control, format and
// non-printable character and every byte that is not UTF-8 as a Go
// escape, and keeps printable text (accents, CJK, emoji) as it is.
func TestDisplayEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"plain host-1.example":  "plain host-1.example",
		"café 東京 🙂":             "café 東京 🙂",
		"a\nb\tc\rd":            `a\nb\tc\rd`,
		"\x1b[31mred\x07":       `\x1b[31mred\a`,
		"zero\u200bwidth":       `zero\u200bwidth`,
		"rtl\u202eoverride":     `rtl\u202eoverride`,
		"bom\ufeff":             `bom\ufeff`,
		"c1\u0085\u009b":        `c1\u0085\u009b`,
		"latin1 \xe9":           `latin1 \xe9`,
		"nbsp\u00a0and\u2028ls": `nbsp\u00a0and\u2028ls`,
	} {
		if got := display(in); got != want {
			t.Errorf("display(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestErrorTextKeepsOnlyItsOwnLines (issue 25, item 11): the final
// `mongomig:` message kept every newline, so a server message or a name
// could print a line of its own; now a line break survives only between
// the errors of a join or an ErrorList.
func TestErrorTextKeepsOnlyItsOwnLines(t *testing.T) {
	wrapped := fmt.Errorf("read lease: %w", errors.New("held by "+forged))
	if got := errorText(wrapped, ""); strings.Contains(got, "\n") || rawControl(got) != "" {
		t.Errorf("errorText = %q: a forged line or a control character", got)
	}
	list := migration.ErrorList{
		{File: "0001_a.yaml", Pos: migration.Pos{Line: 1, Column: 1}, Msg: "first"},
		{File: "0002_b.yaml", Pos: migration.Pos{Line: 2, Column: 1}, Msg: "second " + forged},
	}
	got := errorText(fmt.Errorf("load: %w", list), "")
	lines := strings.Split(got, "\n")
	if len(lines) != 2 || lines[0] != "load: 0001_a.yaml:1:1: first" || !strings.HasPrefix(lines[1], "0002_b.yaml:2:1: second evil\\x1b[31m") {
		t.Errorf("ErrorList rendered as %q, want one line per error, each escaped", got)
	}
	joined := errors.Join(errors.New("lock lost"), errors.New("release: "+forged))
	if got := errorText(joined, ""); strings.Count(got, "\n") != 1 || rawControl(got) != "" {
		t.Errorf("errors.Join rendered as %q, want two lines, escaped", got)
	}
}

// TestDatabaseStringsAreEscaped (issue 25, item 11): a lease's owner and
// host and the ledger's appliedBy.host are the database's, and reached the
// terminal raw in status and unlock; so did a collection name in init's
// and analyze's output.
func TestDatabaseStringsAreEscaped(t *testing.T) {
	dir := sampleSandbox(t)
	migs := copySamples(t)
	args := func(a ...string) []string { return append([]string{"--embedded", dir, "--dir", migs}, a...) }
	if r := run(t, false, args("up", "--to", "1")...); r.code != ExitOK {
		t.Fatalf("up: exit %d\n%s", r.code, r.stderr)
	}
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		ctx := context.Background()
		if _, err := db.Collection("mongomig_migrations").UpdateMany(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "appliedBy.host", Value: forged}, {Key: "appliedBy.user", Value: forged}}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Collection("mongomig_lock").InsertOne(ctx, bson.D{
			{Key: "_id", Value: "backfill:users"}, {Key: "owner", Value: forged}, {Key: "host", Value: forged}, {Key: "pid", Value: 7},
			{Key: "acquiredAt", Value: time.Now()}, {Key: "expiresAt", Value: time.Now().Add(time.Hour)},
		}); err != nil {
			t.Fatal(err)
		}
		// FerretDB v1 loses a collection whose name is not ASCII (its
		// SQLite table is not found afterwards) and fails to read back a
		// document with a control character in a field name: format
		// characters in a field name, the forged string in an _id here.
		audit := db.Collection("audit")
		const field = "evil\u200b\u202ename"
		for _, doc := range []bson.D{{{Key: "_id", Value: forged}, {Key: field, Value: 1}}, {{Key: "_id", Value: 2}, {Key: field, Value: "x"}}} {
			if _, err := audit.InsertOne(ctx, doc); err != nil {
				t.Fatal(err)
			}
		}
	})
	for _, cmd := range [][]string{
		{"status"}, {"unlock"}, {"init", "--out", t.TempDir() + "/0001_baseline.yaml"}, {"analyze"}, {"analyze", "--format", "markdown"},
	} {
		r := run(t, false, args(cmd...)...)
		for name, s := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
			if what := rawControl(s); what != "" {
				t.Errorf("%v (exit %d): %s holds %s:\n%s", cmd, r.code, name, what, s)
			}
		}
		if cmd[0] == "status" && !strings.Contains(r.stdout, `evil\x1b[31m\x1b]0;pwned\a\u200b\u202e\nmongomig: the database`) {
			t.Errorf("status does not show the host escaped:\n%s", r.stdout)
		}
	}
}

// TestPlanEscapesWhatItQuotes (issue 25, item 11): a plan's notes and
// command texts quote collection names and documents; rendered, they hold
// no control or format character and print no line of their own.
func TestPlanEscapesWhatItQuotes(t *testing.T) {
	var out bytes.Buffer
	e := &env{out: &output{out: &out, err: &out}}
	p := &runner.Plan{Direction: "up", Migrations: []runner.PlannedMigration{{Version: 1, File: "0001_a.yaml",
		Commands: []runner.Command{{Collection: "users", Name: "collMod", Text: runner.ExtJSON(`{"collMod": "users", "validator": {"$jsonSchema": {"description": "` + forged + `"}}}`)}}}},
		Notes: []string{"0001_a.yaml: " + forged + ": 3 documents at version 1 or above are downgraded to 0"}}
	if err := e.renderPlan(p, nil); err != nil {
		t.Fatal(err)
	}
	if what := rawControl(out.String()); what != "" {
		t.Errorf("the plan holds %s:\n%s", what, out.String())
	}
}
