package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// credentialOptions are the URI options that carry a credential: those
// the driver's URI parser (x/mongo/driver/connstring) reads, the proxy
// password of the connection string specification (the driver keeps it
// as an unknown option), and an unknown option whose value has a
// credential's shape. Each is checked by redactURI and redactErr, and end
// to end by TestCredentialOptionsNeverShown.
var credentialOptions = []struct {
	name, query, secret string
}{
	{"tlsCertificateKeyFilePassword", "tls=true&tlsCertificateKeyFile=k.pem&tlsCertificateKeyFilePassword=Tls-Key-Pass-1", "Tls-Key-Pass-1"},
	{"sslClientCertificateKeyPassword", "ssl=true&sslClientCertificateKeyFile=k.pem&sslClientCertificateKeyPassword=Ssl-Key-Pass-2", "Ssl-Key-Pass-2"},
	{"proxyPassword", "proxyHost=proxy.example&proxyUsername=ada&proxyPassword=Proxy-Pass-3", "Proxy-Pass-3"},
	{"AWS_SESSION_TOKEN", "authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:Fwo-Session-4", "Fwo-Session-4"},
	{"OIDC property", "authMechanism=MONGODB-OIDC&authMechanismProperties=ENVIRONMENT:azure,TOKEN_RESOURCE:api://app,OIDC_TOKEN:Oidc-Token-5", "Oidc-Token-5"},
	{"escaped property", "authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN%3AEsc%2BToken%2F6", "Esc+Token/6"},
	{"JWT-shaped value", "appName=x&hint=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJlNw", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJlNw"},
	{"AWS-key-shaped value", "appName=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"},
	{"GitHub-token-shaped value", "comment=ghp_0123456789abcdefABCDEF0123456789abcd", "ghp_0123456789abcdefABCDEF0123456789abcd"},
}

func TestRedactEachCredentialOption(t *testing.T) {
	for _, c := range credentialOptions {
		uri := "mongodb://db.example:27017/app?" + c.query
		shown := redactURI(uri)
		if strings.Contains(shown, c.secret) || strings.Contains(shown, strings.ReplaceAll(c.secret, "+", "%2B")) {
			t.Errorf("%s: redactURI shows the secret: %s", c.name, shown)
		}
		if !strings.Contains(shown, "db.example:27017/app?") {
			t.Errorf("%s: redactURI hides more than credentials: %s", c.name, shown)
		}
		for _, form := range []string{c.secret, strings.ReplaceAll(strings.ReplaceAll(c.secret, "+", "%2B"), "/", "%2F")} {
			msg := `connect: option value "` + form + `" refused by ` + uri
			if got := redactErr(msg, uri); strings.Contains(got, form) {
				t.Errorf("%s: redactErr left %q in %q", c.name, form, got)
			}
		}
	}
	// What is not a credential stays readable.
	for _, uri := range []string{
		"mongodb://h/app?appName=billing-service-eu-west-1-production&replicaSet=rs0&tlsCAFile=/etc/ssl/certs/ca-bundle.crt",
		"mongodb://h/app?authMechanism=GSSAPI&authMechanismProperties=SERVICE_NAME:mongodb,CANONICALIZE_HOST_NAME:true",
		"mongodb://h/app?readPreferenceTags=dc:ny,rack:r1&proxyHost=proxy.example&proxyUsername=ada",
	} {
		if got := redactURI(uri); got != uri {
			t.Errorf("redactURI(%s) = %s, want it unchanged", uri, got)
		}
	}
}

// TestCredentialOptionsNeverShown runs commands with each credential
// option in the URI, given by --uri and by MONGOMIG_URI, in text and
// JSON, against a reachable sandbox and an unreachable host: the secret
// appears in no output.
func TestCredentialOptionsNeverShown(t *testing.T) {
	srv, err := sandbox.Start(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop(context.Background()) }()
	hosts := []string{strings.TrimPrefix(srv.URI(), "mongodb://") + "app", "127.0.0.1:1/app"}
	for _, c := range credentialOptions {
		for _, host := range hosts {
			uri := "mongodb://" + host + "?serverSelectionTimeoutMS=300&" + c.query
			for _, cmd := range [][]string{{"info"}, {"status"}, {"up", "--dry-run"}, {"--json", "status"}, {"--json", "info"}} {
				for _, viaEnv := range []bool{false, true} {
					args := append([]string{"--dir", "../../migrations"}, cmd...)
					if viaEnv {
						t.Setenv("MONGOMIG_URI", uri)
					} else {
						t.Setenv("MONGOMIG_URI", "")
						args = append([]string{"--uri", uri}, args...)
					}
					r := run(t, false, args...)
					if strings.Contains(r.stdout+r.stderr, c.secret) {
						t.Errorf("%s leaked by %v (env %v):\n%s%s", c.name, cmd, viaEnv, r.stdout, r.stderr)
					}
				}
			}
		}
	}
}

// TestLedgerHoldsNoCredential: up with a URI carrying a credential option
// the server ignores records who applied each migration (host, user, pid)
// and nothing of the URI.
func TestLedgerHoldsNoCredential(t *testing.T) {
	dir := t.TempDir()
	srv, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	uri := strings.TrimSuffix(srv.URI(), "/") + "/app?proxyPassword=Proxy-Pass-3&appName=AKIAIOSFODNN7EXAMPLE"
	r := run(t, false, "--uri", uri, "--dir", "../../migrations", "up")
	if r.code != ExitOK {
		t.Fatalf("up: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, false, "--uri", uri, "--dir", "../../migrations", "--json", "status")
	for _, s := range []string{"Proxy-Pass-3", "AKIAIOSFODNN7EXAMPLE"} {
		if strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("status shows %s:\n%s", s, r.stdout)
		}
	}
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		cur, err := db.Collection("mongomig_migrations").Find(context.Background(), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		var entries []bson.M
		if err := cur.All(context.Background(), &entries); err != nil {
			t.Fatal(err)
		}
		if len(entries) == 0 {
			t.Fatal("no ledger entry")
		}
		for _, e := range entries {
			text := fmt.Sprint(e)
			if strings.Contains(text, "Proxy-Pass-3") || strings.Contains(text, "AKIAIOSFODNN7EXAMPLE") {
				t.Errorf("ledger entry holds a credential: %s", text)
			}
		}
	})
}
