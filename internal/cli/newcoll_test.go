package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// TestNewCollectionSuggestsTheDatabases: a file declaring `customer`
// where the database has `customers` (created by the application, no
// migration declares it) is warned of by up --dry-run and up, with the
// database's name as the did-you-mean; up used to create `customer`
// silently. A collection already in the database is not new.
func TestNewCollectionSuggestsTheDatabases(t *testing.T) {
	dir, migs := t.TempDir(), t.TempDir()
	if r := run(t, false, "--embedded", dir, "info"); r.code != 0 {
		t.Fatalf("info: %s", r.stderr)
	}
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		for _, c := range []string{"customers", "invoices"} {
			if err := db.CreateCollection(context.Background(), c); err != nil {
				t.Fatal(err)
			}
		}
	})
	yaml := "collections:\n  customer:\n    indexes:\n      create:\n        - keys: {email: 1}\n  invoices:\n    indexes:\n      create:\n        - keys: {at: 1}\n"
	if err := os.WriteFile(filepath.Join(migs, "0001_customer_email.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "warning: 0001_customer_email.yaml:2:3: collection customer is declared by no earlier migration and the database has none, so up %s it; did you mean customers, which the database has?"
	r := run(t, false, "--embedded", dir, "--dir", migs, "up", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stderr, strings.Replace(want, "%s", "would create", 1)+" (rename the key before applying)\n") {
		t.Errorf("dry run: exit %d\n%s", r.code, r.stderr)
	}
	r = run(t, false, "--embedded", dir, "--dir", migs, "up")
	if r.code != 0 || !strings.Contains(r.stderr, strings.Replace(want, "%s", "creates", 1)+"\n") || strings.Contains(r.stderr, "collection invoices") || strings.Contains(r.stderr, "note:") {
		t.Errorf("up: exit %d\n%s", r.code, r.stderr)
	}
}
