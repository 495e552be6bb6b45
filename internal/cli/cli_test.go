package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/internal/sandbox"
)

type result struct {
	code           int
	stdout, stderr string
}

// startTestSandbox is what the stock cmd/mongomig injects: the package
// itself links no sandbox (internal/depcheck checks it).
func startTestSandbox(_ context.Context, dir string) (string, func(context.Context) error, error) {
	srv, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		return "", nil, err
	}
	return srv.URI(), srv.Stop, nil
}

// run invokes Run like a process would, with buffers for streams.
func run(t *testing.T, terminal bool, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, Streams{
		In: strings.NewReader(""), Out: &out, Err: &errb,
		OutIsTerminal: terminal, ErrIsTerminal: terminal,
	}, Config{Embedded: startTestSandbox})
	return result{code, out.String(), errb.String()}
}

func TestLintSamples(t *testing.T) {
	r := run(t, false, "lint", "--dir", "../../migrations")
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "migrations checked, 0 errors, 0 warnings") {
		t.Errorf("stdout = %q", r.stdout)
	}
}

// TestLintBroken: exit 2, every problem with file:line:column, and schema
// problems found even in files with other errors.
func TestLintBroken(t *testing.T) {
	r := run(t, false, "--dir", "testdata/broken", "lint")
	if r.code != ExitUsage {
		t.Fatalf("exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"0001_users.yaml:9:24: error: validator /properties/name/type: MongoDB does not support type: integer",
		"0001_users.yaml:10:45: error: validator /properties/email/format: MongoDB does not support format",
		"0001_users.yaml:11:5: error: unknown key \"validationLevl\"\n    hint: did you mean \"validationLevel\"?",
		"0002_orders.yaml:1:1: error: version 2 is also used by 0002_duplicate.yaml",
		"0002_orders.yaml:3:23: error: invalid validationAction \"block\"",
		"0002_orders.yaml:5:9: error: upgrade step 1 is empty",
		"0002_orders.yaml:6:18: error: rename \"total\" to \"total.gross\": the paths overlap",
		"0003_dates.json:3:42: error: $date value: malformed Extended JSON",
		"8 errors, 0 warnings",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.stderr != "" {
		t.Errorf("lint problems belong on stdout; stderr = %q", r.stderr)
	}
}

func TestLintJSON(t *testing.T) {
	r := run(t, false, "--json", "--dir", "testdata/broken", "lint")
	if r.code != ExitUsage {
		t.Fatalf("exit %d", r.code)
	}
	var doc struct {
		Errors   int `json:"errors"`
		Problems []struct {
			File   string `json:"file"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if doc.Errors != 8 || len(doc.Problems) != 8 || doc.Problems[0].File != "0001_users.yaml" || doc.Problems[0].Line != 9 {
		t.Errorf("json = %+v", doc)
	}
}

func TestLintMissingDir(t *testing.T) {
	r := run(t, false, "--dir", "no/such/dir", "lint")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "migration directory no/such/dir: no such file or directory; pass --dir") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestCreateThenLint(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "00007_existing.yaml"), []byte("collections: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, false, "--dir", dir, "create", "Add User-Status")
	want := filepath.Join(dir, "00008_add_user_status.yaml")
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, false, "--json", "--dir", dir, "create", "next")
	var created createResult
	if err := json.Unmarshal([]byte(r.stdout), &created); err != nil || created.Version != 9 || created.Name != "next" {
		t.Fatalf("json create = %q (%v)", r.stdout, err)
	}
	// The template declares nothing: lint warns (up refuses it while
	// pending; lint cannot tell it from one an earlier mongomig applied).
	r = run(t, false, "--dir", dir, "lint")
	if r.code != 0 || !strings.Contains(r.stdout, "00008_add_user_status.yaml:29:1: warning: migration declares no collection") ||
		!strings.Contains(r.stdout, "00008_add_user_status.yaml:3:1: warning: description is still the template's placeholder") {
		t.Fatalf("untouched template: exit %d\n%s", r.code, r.stdout)
	}
}

func TestCreateNames(t *testing.T) {
	for in, want := range map[string]string{
		"Add User-Status":   "add_user_status",
		"Add HTTP API key":  "add_http_api_key",
		"AddHTTPAPIKey":     "add_httpapi_key",
		"HTTPServer config": "http_server_config",
		"CON":               "con",
		"userStatus2FA":     "user_status2_fa",
		"v2 Orders":         "v2_orders",
	} {
		if got := toSnake(in); got != want {
			t.Errorf("toSnake(%q) = %q, want %q", in, got, want)
		}
	}
}

// After a file with the largest int64 version, no next number exists:
// create refuses instead of writing -9223372036854775808_next.yaml.
func TestCreateAfterTheLargestVersion(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "9223372036854775807_max.yaml"), []byte("collections: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, false, "--dir", dir, "create", "next")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "no next number fits") {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a refused create wrote a file: %d entries", len(entries))
	}
}

func TestCreateRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--dir", dir, "create"},
		{"--dir", dir, "create", "a", "b"},
		{"--dir", dir, "create", "naïve name!"},
	} {
		r := run(t, false, args...)
		if r.code != ExitUsage || r.stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("a refused create wrote %d files", len(entries))
	}
}

func TestInfoEmbedded(t *testing.T) {
	dir := t.TempDir()
	r := run(t, false, "--embedded", dir, "info")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"FerretDB", "standalone", "database   app", "validators           no", "NotImplemented"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "warning: this server does not enforce validators") {
		t.Errorf("stderr lacks the client-side-only warning: %q", r.stderr)
	}

	// The same data directory works again, and --json is a stable document.
	r = run(t, false, "info", "--embedded", dir, "--json", "--db", "shop")
	var doc struct {
		Database string `json:"database"`
		Server   struct {
			Topology        string `json:"topology"`
			FerretDBVersion string `json:"ferretdbVersion"`
		} `json:"server"`
		Capabilities map[string]struct {
			Available bool   `json:"available"`
			Reason    string `json:"reason"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	if doc.Database != "shop" || doc.Server.Topology != "standalone" || doc.Server.FerretDBVersion == "" {
		t.Errorf("json = %+v", doc)
	}
	for _, k := range []string{"validators", "jsonSchemaQueries", "pipelineUpdates", "transactions"} {
		c, ok := doc.Capabilities[k]
		if !ok || c.Available || c.Reason == "" {
			t.Errorf("capability %s = %+v (present %v), want unavailable with a reason on the sandbox", k, c, ok)
		}
	}
}

func TestConnectionErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"info"}, ExitUsage, "no server: pass --uri"},
		{[]string{"--uri", "mongodb://127.0.0.1:1", "info"}, ExitUsage, "no database: pass --db"},
		{[]string{"--uri", "mongodb://h", "--embedded", "x", "info"}, ExitUsage, "--embedded and --uri both name a server"},
		{[]string{"--uri", "postgres://x", "--db", "d", "info"}, ExitUsage, "invalid --uri"},
		{[]string{"--uri", "mongodb://ada:s3cr3t@127.0.0.1:1/app?serverSelectionTimeoutMS=200", "info"}, ExitFailure, "cannot reach mongodb://ada:***@127.0.0.1:1/app"},
	}
	for _, tc := range cases {
		r := run(t, false, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, r.code, r.stderr, tc.code, tc.msg)
		}
		if strings.Contains(r.stderr+r.stdout, "s3cr3t") {
			t.Errorf("%v: password leaked: %s", tc.args, r.stderr)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"frobnicate"}, {"lint", "--bogus"}, {"lint", "extra"}, {"--nope", "lint"}} {
		r := run(t, false, args...)
		if r.code != ExitUsage {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, r.code, r.stderr)
		}
	}
}

func TestVersion(t *testing.T) {
	r := run(t, false, "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "mongomig version ") {
		t.Fatalf("exit %d, stdout %q", r.code, r.stdout)
	}
}

func TestColourRules(t *testing.T) {
	const esc = "\x1b["
	args := []string{"--dir", "testdata/broken", "lint"}
	if r := run(t, true, args...); !strings.Contains(r.stdout, esc) {
		t.Errorf("no colour on a terminal:\n%s", r.stdout)
	}
	if r := run(t, false, args...); strings.Contains(r.stdout, esc) {
		t.Errorf("colour when not a terminal")
	}
	if r := run(t, true, append([]string{"--no-color"}, args...)...); strings.Contains(r.stdout, esc) {
		t.Errorf("colour despite --no-color")
	}
	t.Setenv("NO_COLOR", "")
	if r := run(t, true, args...); strings.Contains(r.stdout, esc) {
		t.Errorf("colour despite NO_COLOR set (even empty)")
	}
}

func TestRedactURI(t *testing.T) {
	for in, want := range map[string]string{
		"mongodb://ada:pw@h:27017/db?x=1":         "mongodb://ada:***@h:27017/db?x=1",
		"mongodb+srv://ada:p%40ss@c.example.net/": "mongodb+srv://ada:***@c.example.net/",
		"mongodb://h/db":                          "mongodb://h/db",
		"mongodb://ada@h/db":                      "mongodb://ada@h/db",
		"mongodb://a:b@h1,h2/db":                  "mongodb://a:***@h1,h2/db",
	} {
		if got := redactURI(in); got != want {
			t.Errorf("redactURI(%q) = %q, want %q", in, got, want)
		}
	}
}
