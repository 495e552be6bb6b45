package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/internal/sandbox"
)

// TestPasswordNeverShown runs every command that connects with a password
// in the URI — against a server that refuses the credentials, against an
// unreachable host, and with a malformed URI — in text and JSON, and
// requires that the password appears nowhere in the output.
func TestPasswordNeverShown(t *testing.T) {
	const secret = "S3cret-Pa55w0rd"
	srv, err := sandbox.Start(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop(context.Background()) }()
	host := strings.TrimPrefix(srv.URI(), "mongodb://")
	uris := []string{
		"mongodb://ada:" + secret + "@" + host + "app?serverSelectionTimeoutMS=300",                 // credentials refused
		"mongodb://ada:" + secret + "@127.0.0.1:1/app?serverSelectionTimeoutMS=200",                 // unreachable
		"mongodb://ada:" + secret + "@127.0.0.1:1/app?serverSelectionTimeoutMS=x",                   // malformed option
		"mongodb+srv://ada:" + secret + "@no-such-cluster.invalid/app?serverSelectionTimeoutMS=200", // SRV lookup fails
		"mongodb://ada:" + secret + "@[::1/app",                                                     // unparsable
		"mongodb://ada%3A" + secret + "@127.0.0.1:1/app?serverSelectionTimeoutMS=200",               // user info escaped as one piece
	}
	commands := [][]string{
		{"info"}, {"status"}, {"status", "--check"}, {"up"}, {"up", "--dry-run"}, {"down"},
		{"validate"}, {"validate", "--format", "junit"}, {"backfill"}, {"unlock", "--force"}, {"demo"},
	}
	checked := 0
	for _, uri := range uris {
		for _, cmd := range commands {
			for _, asJSON := range []bool{false, true} {
				args := []string{"--uri", uri, "--dir", "../../migrations"}
				if asJSON {
					args = append(args, "--json")
				}
				r := run(t, false, append(args, cmd...)...)
				if r.code == 0 {
					t.Errorf("%v with %s: exit 0", cmd, uri)
				}
				if strings.Contains(r.stdout+r.stderr, secret) {
					t.Errorf("password leaked by %v (uri %d):\n%s%s", cmd, checked, r.stdout, r.stderr)
				}
				if r.stderr == "" {
					t.Errorf("%v: no error message", cmd)
				}
				checked++
			}
		}
	}
	t.Logf("%d command runs with a password in the URI, none showed it", checked)
}

// TestOptionCredentialsNeverShown: credentials carried by URI options (an
// AWS session token, a TLS key password, token- or secret-like options) and
// the AWS access key id in the user info never appear in any output, for a
// server that refuses them, an unreachable host and a URI the driver
// refuses.
func TestOptionCredentialsNeverShown(t *testing.T) {
	srv, err := sandbox.Start(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop(context.Background()) }()
	host := strings.TrimPrefix(srv.URI(), "mongodb://")
	secrets := []string{"AKIAEXAMPLEKEYID", "wJalrXUtnFEMIK7MDENG", "FwoGZXIvYXdzSESSION", "KeyFilePassw0rd", "tok-9f8e7d6c", "clientSecretValue"}
	aws := "mongodb://AKIAEXAMPLEKEYID:wJalrXUtnFEMIK7MDENG@%s?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:FwoGZXIvYXdzSESSION&serverSelectionTimeoutMS=%s"
	uris := []string{
		fmt.Sprintf(aws, host+"app", "300"),
		fmt.Sprintf(aws, "127.0.0.1:1/app", "200"),
		fmt.Sprintf(aws, "127.0.0.1:1/app", "x"),
		"mongodb://127.0.0.1:1/app?tls=true&tlsCertificateKeyFile=nosuch.pem&tlsCertificateKeyFilePassword=KeyFilePassw0rd&serverSelectionTimeoutMS=200",
		"mongodb://127.0.0.1:1/app?apiToken=tok-9f8e7d6c&clientSecret=clientSecretValue&serverSelectionTimeoutMS=200",
		"mongodb://127.0.0.1:1/app?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:FwoGZXIvYXdzSESSION,BAD",
	}
	for _, uri := range uris {
		for _, cmd := range [][]string{{"info"}, {"status"}, {"up", "--dry-run"}, {"validate", "--format", "junit"}, {"--json", "validate"}} {
			r := run(t, false, append([]string{"--uri", uri, "--dir", "../../migrations"}, cmd...)...)
			if r.code == 0 || r.stderr == "" {
				t.Errorf("%v with %s: exit %d, stderr %q", cmd, redactURI(uri), r.code, r.stderr)
			}
			for _, s := range secrets {
				if strings.Contains(r.stdout+r.stderr, s) {
					t.Errorf("%s leaked by %v:\n%s%s", s, cmd, r.stdout, r.stderr)
				}
			}
		}
	}
}
