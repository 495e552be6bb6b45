package backfill_test

import (
	"os"
	"strconv"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/fixtures"
)

// TestMain runs this test binary as a helper process when a test asks it
// to: a backfill of its own (MONGOMIG_HELPER_MODE=backfill) or a sandbox
// server a test can kill (serve).
func TestMain(m *testing.M) {
	if uri := os.Getenv("MONGOMIG_HELPER_URI"); uri != "" {
		switch os.Getenv("MONGOMIG_HELPER_MODE") {
		case "backfill":
			client, err := mongo.Connect(options.Client().ApplyURI(uri))
			if err != nil {
				os.Exit(1)
			}
			db := os.Getenv("MONGOMIG_HELPER_DB")
			if db == "" {
				db = "app"
			}
			os.Exit(helperBackfill(client.Database(db)))
		case "serve":
			os.Exit(fixtures.HelperServe())
		}
		os.Exit(2)
	}
	os.Exit(m.Run())
}

var (
	samples   = fixtures.Samples
	newRunner = fixtures.NewRunner
)

// trials is MONGOMIG_TRIALS when it is above def (make reliability), else
// def.
func trials(def int) int {
	if v, err := strconv.Atoi(os.Getenv("MONGOMIG_TRIALS")); err == nil && v > def {
		return v
	}
	return def
}

var serveProcess = fixtures.ServeProcess
