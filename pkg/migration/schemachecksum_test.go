package migration_test

import (
	"testing"

	"github.com/mongomig/mongomig/migrations"
	"github.com/mongomig/mongomig/pkg/migration"
)

// TestSchemaChecksumIsStable: the ledger stores each applied file's
// schema checksum and a later release compares it (drift), so its value
// for the sample files is pinned, as releases before this one computed it.
func TestSchemaChecksumIsStable(t *testing.T) {
	ms, err := migration.Load(migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"0001_create_users.yaml":            "schema-sha256:942625151096dfe0c39392ff877020465a81918a1f333f9cb8bab3c4fb95b67d",
		"0002_orders_and_blog.yaml":         "schema-sha256:f6922405b09d89b2a9a243ac02a2c450d1e1b3e24c1e090e9cc2c9d7fbd5b9f5",
		"0003_user_contact.yaml":            "schema-sha256:0261ec0f9769137ead10e79cae89536d6dad9c2a861d2cfef0dae0eb83a091cc",
		"0004_order_currency_and_tags.yaml": "schema-sha256:b3604f570845266caed6f1b3f5988369a6f92374d3c0eda9647e580727e25352",
	}
	if len(ms) != len(want) {
		t.Fatalf("%d sample migrations, want %d", len(ms), len(want))
	}
	for _, m := range ms {
		if got := migration.SchemaChecksum(m); got != want[m.File] {
			t.Errorf("%s: schema checksum %s, want %s", m.File, got, want[m.File])
		}
	}
}
