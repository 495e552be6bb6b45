package lease_test

import (
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/lease/leasetest"
)

// TestConformanceSandbox runs the conformance suite on the embedded
// server (FerretDB).
func TestConformanceSandbox(t *testing.T) {
	srv := sandboxtest.Start(t)
	leasetest.Run(t, leasetest.Server{
		Connect: func(t *testing.T, opts ...*options.ClientOptions) *mongo.Client {
			return sandboxtest.Connect(t, srv.URI(), opts...)
		},
		Database: "leasetest",
	})
}

// TestConformanceMongoDB runs the same suite on the MongoDB named by
// MONGOMIG_TEST_URI.
func TestConformanceMongoDB(t *testing.T) {
	uri := os.Getenv("MONGOMIG_TEST_URI")
	if uri == "" {
		t.Skip("MONGOMIG_TEST_URI is not set: TestConformanceSandbox runs the suite on the sandbox")
	}
	leasetest.Run(t, leasetest.Server{
		Connect: func(t *testing.T, opts ...*options.ClientOptions) *mongo.Client {
			return sandboxtest.Connect(t, uri, opts...)
		},
		Database: "mongomig_leasetest",
	})
}
