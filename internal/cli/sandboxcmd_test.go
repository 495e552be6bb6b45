package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestEmptyURIValue: `--uri $EMPTY --dir .` used to take --dir as the
// URI and "." as an unknown command; now --uri says it needs a value.
func TestEmptyURIValue(t *testing.T) {
	for _, args := range [][]string{
		{"--uri", "--dir", ".", "status"},
		{"status", "--uri", "--dir", "."},
		{"sandbox", "load", "--uri", "--db", "x", "f.jsonl"},
	} {
		r := run(t, false, args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "--uri needs a value: it is followed by --") || strings.Contains(r.stderr, "unknown command") {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	// A value that merely starts with a dash is still a value.
	if err := checkFlagValues(newApp(&env{}), []string{"up", "--to", "-1"}); err != nil {
		t.Errorf("--to -1: %v", err)
	}
}

func TestFlagsFirstSubcommand(t *testing.T) {
	app := newApp(&env{})
	for _, c := range []struct{ in, want string }{
		{"sandbox load users.jsonl --drop --collection c", "sandbox load --drop --collection c users.jsonl"},
		{"sandbox serve --port 5", "sandbox serve --port 5"},
		{"sandbox nosuch --port 5", "sandbox nosuch --port 5"},
	} {
		if got := strings.Join(flagsFirst(app, strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("flagsFirst(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestLoadRefusesBadLines: every bad line is named by file:line, before
// any server is contacted (no --uri is given: the files are read first).
func TestLoadRefusesBadLines(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ text, want string }{
		"array.jsonl":  {`[{"a":1}]`, "array.jsonl:1: a JSON array, not one document a line: export with mongoexport without --jsonArray"},
		"scalar.jsonl": {"{\"a\":1}\n\n42\n", `scalar.jsonl:3: not a document (a line starts with '{'): 42`},
		"cut.jsonl":    {"{\"a\":1}\n{\"a\":", "cut.jsonl:2: not a document in Extended JSON"},
		"oid.jsonl":    {`{"_id":{"$oid":"nothex"}}`, "oid.jsonl:1: not a document in Extended JSON"},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, false, "sandbox", "load", path)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, want 2 and %q\n%s", name, r.code, c.want, r.stderr)
		}
	}
	r := run(t, false, "sandbox", "load", filepath.Join(dir, "missing.jsonl"))
	if r.code != ExitUsage || !strings.Contains(r.stderr, "missing.jsonl: no such file or directory") {
		t.Errorf("missing file: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, false, "sandbox", "load"); r.code != ExitUsage || !strings.Contains(r.stderr, "sandbox load needs the files to load") {
		t.Errorf("no files: exit %d\n%s", r.code, r.stderr)
	}
}

// TestReadLines reads mongoexport's relaxed and canonical output, with a
// byte order mark, CRLF line ends and blank lines.
func TestReadLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.jsonl")
	text := "\xef\xbb\xbf{\"_id\":{\"$oid\":\"5f1d7f3e8e4b2c1a9c0b1234\"},\"n\":{\"$numberLong\":\"5\"}}\r\n\r\n{\"_id\":2,\"at\":{\"$date\":\"2020-01-02T03:04:05Z\"}}"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var lines []int
	var docs []bson.D
	n, err := readLines(path, func(line int, d bson.D) error { lines, docs = append(lines, line), append(docs, d); return nil })
	if err != nil || n != 2 {
		t.Fatalf("readLines = %d, %v", n, err)
	}
	if lines[0] != 1 || lines[1] != 3 {
		t.Errorf("lines = %v, want [1 3]", lines)
	}
	if _, ok := docs[0][0].Value.(bson.ObjectID); !ok || docs[0][1].Value != int64(5) {
		t.Errorf("first document = %v: want an ObjectID _id and an int64", docs[0])
	}
	if _, ok := docs[1][1].Value.(bson.DateTime); !ok || docs[1][0].Value != int32(2) {
		t.Errorf("second document = %v: want an int32 _id and a date", docs[1])
	}
	if got := collectionOf("dir/users.json.txt"); got != "users" {
		t.Errorf("collectionOf = %q", got)
	}
}

// TestServeWithoutSandbox: a binary built without the sandbox says so.
func TestServeWithoutSandbox(t *testing.T) {
	r := run(t, false, "sandbox", "serve")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "built without the embedded sandbox, so it cannot serve one") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, false, "sandbox", "serve", "--port", "70000"); r.code != ExitUsage || !strings.Contains(r.stderr, "--port 70000: give a TCP port") {
		t.Errorf("--port 70000: exit %d\n%s", r.code, r.stderr)
	}
}

// TestLintRequireFuncs: the stock binary's lint says which func steps it
// could not check (a warning, exit 0), and --require-funcs makes each an
// error (exit 2).
func TestLintRequireFuncs(t *testing.T) {
	dir := "../../examples/custom-mongomig/migrations"
	r := run(t, false, "--dir", dir, "lint")
	if r.code != ExitOK || !strings.Contains(r.stdout, `0001_split_name.yaml:5:9: warning: func step not checked: this mongomig binary does not have the Go function "splitName"`) ||
		!strings.Contains(r.stdout, "not checked: 1 func not in this binary (splitName)") {
		t.Errorf("lint: exit %d\n%s", r.code, r.stdout)
	}
	r = run(t, false, "--dir", dir, "lint", "--require-funcs")
	if r.code != ExitUsage || !strings.Contains(r.stdout, "0001_split_name.yaml:5:9: error: func step not checked") || !strings.Contains(r.stdout, "1 error") {
		t.Errorf("lint --require-funcs: exit %d\n%s", r.code, r.stdout)
	}
	r = run(t, false, "--dir", dir, "--json", "lint", "--require-funcs")
	if r.code != ExitUsage || !strings.Contains(r.stdout, `"errors": 1`) || strings.Contains(r.stdout, "not checked: 1 func") {
		t.Errorf("lint --json --require-funcs: exit %d\n%s", r.code, r.stdout)
	}
}
