package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/internal/sandbox"
)

// failureObject decodes stdout as exactly one JSON object (nothing before
// or after it) and returns its "error" member.
func failureObject(t *testing.T, r result) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("exit %d: stdout is not one JSON object: %v\n%s\nstderr: %s", r.code, err, r.stdout, r.stderr)
	}
	if rest, _ := ioReadAll(dec); strings.TrimSpace(rest) != "" {
		t.Fatalf("stdout holds more than one object; after the first: %s", rest)
	}
	e, ok := doc["error"].(map[string]any)
	if !ok || len(doc) != 1 {
		t.Fatalf("stdout %s: want {\"error\": {...}}", r.stdout)
	}
	return e
}

func ioReadAll(dec *json.Decoder) (string, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(dec.Buffered())
	return b.String(), err
}

// volatile replaces the values at paths (dotted, through objects and
// array elements) with "<set>" after checking that each is a non-empty
// string or a number: times, checksums, hosts.
func volatile(t *testing.T, v any, paths ...string) {
	t.Helper()
	for _, p := range paths {
		replaceAt(t, v, strings.Split(p, "."), p)
	}
}

func replaceAt(t *testing.T, v any, path []string, full string) {
	t.Helper()
	switch x := v.(type) {
	case []any:
		for _, el := range x {
			replaceAt(t, el, path, full)
		}
	case map[string]any:
		val, ok := x[path[0]]
		if !ok {
			t.Errorf("%s is missing", full)
			return
		}
		if len(path) > 1 {
			replaceAt(t, val, path[1:], full)
			return
		}
		switch val := val.(type) {
		case string:
			if val == "" {
				t.Errorf("%s is empty", full)
			}
		case float64:
		default:
			t.Errorf("%s = %#v: want a string or a number", full, val)
		}
		x[path[0]] = "<set>"
	}
}

func pin(t *testing.T, what string, got map[string]any, want string) {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("%s: failure object\n%s\nwant\n%s", what, g, want)
	}
}

// TestFailureJSONDrift: `--json up` over an edited applied file prints one
// object on stdout (it printed nothing): kind drift, exit 3, the drifted
// files.
func TestFailureJSONDrift(t *testing.T) {
	dir, migs := t.TempDir(), t.TempDir()
	src, _ := os.ReadFile("../../migrations/0001_create_users.yaml")
	if err := os.WriteFile(filepath.Join(migs, "0001_create_users.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--embedded", dir, "--dir", migs}
	if r := run(t, false, append(args, "up")...); r.code != 0 {
		t.Fatalf("up: %d %s", r.code, r.stderr)
	}
	edited := strings.Replace(string(src), "validationLevel: strict", "validationLevel: moderate", 1)
	if err := os.WriteFile(filepath.Join(migs, "0001_create_users.yaml"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, false, append(args, "--json", "up")...)
	if r.code != ExitCheck || !strings.Contains(r.stderr, "drift: 0001_create_users.yaml was edited") {
		t.Errorf("exit %d, stderr %q: want 3 and the message on stderr as without --json", r.code, r.stderr)
	}
	got := failureObject(t, r)
	if msg, _ := got["message"].(string); !regexp.MustCompile(`^drift: 0001_create_users.yaml was edited after it was applied \(ledger sha256:[0-9a-f]{12}, file sha256:[0-9a-f]{12}\); revert the edit`).MatchString(msg) {
		t.Errorf("message %q", msg)
	}
	volatile(t, got, "message", "details.drifted.checksum", "details.drifted.ledgerChecksum", "details.drifted.appliedAt", "details.drifted.appliedBy")
	pin(t, "drift", got, `{"kind": "drift", "message": "<set>", "exitCode": 3, "details": {"drifted": [
		{"version": 1, "name": "create_users", "file": "0001_create_users.yaml", "state": "drifted",
		 "checksum": "<set>", "ledgerChecksum": "<set>", "appliedAt": "<set>", "appliedBy": "<set>"}]}}`)
}

// TestFailureJSONLockTimeout: a lock held by another process: kind
// lockTimeout, exit 4, the lease and its holder.
func TestFailureJSONLockTimeout(t *testing.T) {
	dir := t.TempDir()
	if r := run(t, false, sandboxArgs(dir, "up", "--to", "0")...); r.code != 0 {
		t.Fatalf("up --to 0: %d %s", r.code, r.stderr)
	}
	holdLock(t, dir)
	r := run(t, false, sandboxArgs(dir, "--json", "up", "--lock-wait", "100ms")...)
	got := failureObject(t, r)
	if msg, _ := got["message"].(string); !strings.HasPrefix(msg, "migration lock not acquired in time: held by other-process") {
		t.Errorf("message %q", msg)
	}
	volatile(t, got, "message", "details.holder.acquiredAt", "details.holder.expiresAt", "details.waitedMs")
	pin(t, "lock timeout", got, `{"kind": "lockTimeout", "message": "<set>", "exitCode": 4, "details": {
		"lease": "mongomig", "waitedMs": "<set>",
		"holder": {"owner": "other-process", "host": "elsewhere", "pid": 7, "acquiredAt": "<set>", "expiresAt": "<set>"}}}`)
}

// TestFailureJSONUnreachable: nothing listens at the address: kind
// unreachable, exit 1, the server's address (its password as ***), for
// every command that connects.
func TestFailureJSONUnreachable(t *testing.T) {
	const uri = "mongodb://ada:s3cr3t@127.0.0.1:1/app?serverSelectionTimeoutMS=200"
	for _, cmd := range [][]string{{"up"}, {"status"}, {"down"}, {"backfill"}, {"validate"}, {"info"}, {"unlock"}, {"up", "--dry-run"}} {
		r := run(t, false, append([]string{"--json", "--uri", uri, "--dir", "../../migrations"}, cmd...)...)
		got := failureObject(t, r)
		if msg, _ := got["message"].(string); !strings.HasPrefix(msg, "cannot reach mongodb://ada:***@127.0.0.1:1/app?serverSelectionTimeoutMS=200: ") ||
			!strings.HasSuffix(msg, "; check the address and that the server is running") {
			t.Errorf("%v: message %q", cmd, msg)
		}
		volatile(t, got, "message")
		pin(t, strings.Join(cmd, " "), got, `{"kind": "unreachable", "message": "<set>", "exitCode": 1, "details": {
			"server": "mongodb://ada:***@127.0.0.1:1/app?serverSelectionTimeoutMS=200"}}`)
	}
}

// TestFailureJSONUsage: a command line that does not parse, and a command
// without a server, still print their object under --json.
func TestFailureJSONUsage(t *testing.T) {
	r := run(t, false, "--json", "up", "--to", "-1")
	got := failureObject(t, r)
	pin(t, "up --to -1", got, `{"kind": "usage", "message": "--to -1: versions are 0 or more", "exitCode": 2, "details": {}}`)
	r = run(t, false, "--json", "--dir", "testdata/broken", "up", "--dry-run", "--embedded", t.TempDir())
	got = failureObject(t, r)
	if got["kind"] != "invalidFiles" || got["exitCode"] != float64(ExitUsage) {
		t.Errorf("invalid files: %v", got)
	}
	if ps, _ := got["details"].(map[string]any)["problems"].([]any); len(ps) != 8 {
		t.Errorf("invalid files: %d problems, want the 8 lint finds: %v", len(ps), got)
	}
}

// TestAuthFailureHeadline: a server that refuses the credentials (the
// sandbox refuses every user) is an authentication failure, told to check
// the credentials and the mechanism, not the address (it said "check the
// address and that the server is running").
func TestAuthFailureHeadline(t *testing.T) {
	uri := sandboxURI(t) + "app?serverSelectionTimeoutMS=2000"
	uri = strings.Replace(uri, "mongodb://", "mongodb://ada:wrong@", 1)
	r := run(t, false, "--uri", uri, "--dir", "../../migrations", "--json", "status")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "authentication to mongodb://ada:***@") ||
		!strings.Contains(r.stderr, "check the credentials (user name, password, authSource) and the mechanism") ||
		strings.Contains(r.stderr, "check the address") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	got := failureObject(t, r)
	volatile(t, got, "message", "details.server")
	pin(t, "auth", got, `{"kind": "authFailed", "message": "<set>", "exitCode": 1, "details": {"server": "<set>", "mechanism": ""}}`)
}

// sandboxURI starts a sandbox server for t and returns its URI (ending in /).
func sandboxURI(t *testing.T) string {
	t.Helper()
	srv, err := sandbox.Start(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	return strings.TrimSuffix(srv.URI(), "/") + "/"
}

// TestAuthFailureHeadlineMongoDB: the test server's refusals of a wrong
// password (AuthenticationFailed) and of a mechanism it has not enabled
// (MechanismUnavailable) are told as authentication failures naming the
// mechanism.
func TestAuthFailureHeadlineMongoDB(t *testing.T) {
	base := os.Getenv("MONGOMIG_TEST_URI")
	if base == "" {
		t.Skip("MONGOMIG_TEST_URI is not set: TestAuthFailureHeadline covers the sandbox's refusal")
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("ada", "wrong")
	u.Path = "/mongomig_authtest"
	for query, mech := range map[string]string{"": "authMechanism, negotiated when the URI names none", "authMechanism=PLAIN": "authMechanism=PLAIN"} {
		u.RawQuery = query
		r := run(t, false, "--uri", u.String(), "--dir", "../../migrations", "--json", "up")
		got := failureObject(t, r)
		if r.code != ExitFailure || got["kind"] != "authFailed" || !strings.Contains(r.stderr, "check the credentials (user name, password, authSource) and the mechanism ("+mech+")") {
			t.Errorf("%q: exit %d, %v, stderr %q", query, r.code, got, r.stderr)
		}
	}
}
