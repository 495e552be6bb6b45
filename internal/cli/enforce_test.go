package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// TestUpRefusesEnumOnMongoDB: on a server that does not enforce enum (the
// second test server, probed), `up --dry-run` and `up` exit 2 naming the
// file, collection and keywords and the two ways out, and `lint --server`
// finds the same in CI; with --client-side-validator for each, up applies
// and says so.
func TestUpRefusesEnumOnMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_cli_enforce", "the refusal needs a server with validators to probe (the library's logic is tested on the sandbox in pkg/runner)")
	uri := os.Getenv("MONGOMIG_TEST_URI")
	dir := "../../migrations"
	lint := run(t, false, "--dir", dir, "lint", "--server", uri)
	if !strings.Contains(lint.stdout, "0003_user_contact.yaml:3:3: error: the validator of users uses enum, which the server at") {
		t.Skipf("the server enforces enum (lint --server: exit %d)\n%s%s", lint.code, lint.stdout, lint.stderr)
	}
	if lint.code != ExitUsage || !strings.Contains(lint.stdout, "hint: rewrite it without them in a new migration, or deploy it client-side only there: mongomig up --client-side-validator users") {
		t.Errorf("lint --server: exit %d\n%s%s", lint.code, lint.stdout, lint.stderr)
	}
	for _, args := range [][]string{{"up", "--dry-run"}, {"up"}} {
		r := run(t, false, append([]string{"--uri", uri, "--db", db.Name(), "--dir", dir}, args...)...)
		if r.code != ExitUsage {
			t.Errorf("%s: exit %d, want 2\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		for _, want := range []string{
			strings.Join(args, " ") + ": the server does not enforce $jsonSchema keywords these validators use; nothing was sent:",
			"0003_user_contact.yaml:3:3: users: enum",
			"rewrite each without those keywords",
			"or pass --client-side-validator orders --client-side-validator users to apply it client-side only",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", args, want, r.stderr)
			}
		}
	}
	r := run(t, false, "--uri", uri, "--db", db.Name(), "--dir", dir, "up", "--client-side-validator", "orders", "--client-side-validator", "users")
	if r.code != ExitOK || !strings.Contains(r.stderr, "validators applied client-side only, as --client-side-validator asked (the server has none for them): orders, users") {
		t.Errorf("up with --client-side-validator: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	st := run(t, false, "--uri", uri, "--db", db.Name(), "--dir", dir, "status")
	for _, want := range []string{"users       0003, client-side only", "posts       0002, server (strict, error)"} {
		if !strings.Contains(st.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, st.stdout)
		}
	}
}
