package probe_test

import (
	"context"
	"net/url"
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/probe"
)

// withCredentials is uri with user ada, a wrong password, and the query
// options extra (authMechanism=...).
func withCredentials(t *testing.T, uri, extra string) string {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("ada", "not-her-password")
	u.RawQuery = "serverSelectionTimeoutMS=3000"
	if extra != "" {
		u.RawQuery += "&" + extra
	}
	return u.String()
}

// pingWith pings the server at uri through a new client: the handshake
// authenticates first.
func pingWith(t *testing.T, uri string) error {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Disconnect(context.Background()) }()
	return c.Ping(context.Background(), nil)
}

// authFailures checks the classification of a real handshake's refusals
// by the server at uri (no credentials needed to reach it): wrong
// credentials, and each mechanism in mechanisms, are authentication
// failures and not an unreachable server; a closed port is unreachable
// and not an authentication failure.
func authFailures(t *testing.T, uri string, mechanisms ...string) {
	for _, extra := range append([]string{""}, mechanisms...) {
		err := pingWith(t, withCredentials(t, uri, extra))
		if err == nil {
			t.Errorf("%q: the server accepted a wrong password", extra)
			continue
		}
		if !probe.AuthFailure(err) || probe.Unreachable(err) {
			t.Errorf("%q: %v: AuthFailure %v, Unreachable %v; want an authentication failure", extra, err, probe.AuthFailure(err), probe.Unreachable(err))
		}
	}
	err := pingWith(t, "mongodb://ada:x@127.0.0.1:1/?serverSelectionTimeoutMS=200")
	if err == nil || probe.AuthFailure(err) || !probe.Unreachable(err) {
		t.Errorf("closed port: %v: AuthFailure %v, Unreachable %v; want unreachable", err, probe.AuthFailure(err), probe.Unreachable(err))
	}
}

func TestAuthFailureSandbox(t *testing.T) {
	authFailures(t, sandboxtest.Start(t).URI())
}

// TestAuthFailureMongoDB: the test server answers a wrong password with
// AuthenticationFailed (18) and the mechanisms it has not enabled with
// MechanismUnavailable (334).
func TestAuthFailureMongoDB(t *testing.T) {
	uri := os.Getenv("MONGOMIG_TEST_URI")
	if uri == "" {
		t.Skip("MONGOMIG_TEST_URI is not set: TestAuthFailureSandbox classifies the sandbox's refusal")
	}
	authFailures(t, uri, "authMechanism=SCRAM-SHA-1", "authMechanism=PLAIN")
}
