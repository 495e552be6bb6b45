package release

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/migrations"
	"github.com/mongomig/mongomig/pkg/version"
)

// registryUpTo is the registry of a release whose migration directory
// holds the sample files up to version top.
func registryUpTo(t *testing.T, top int) *version.Registry {
	t.Helper()
	files := fstest.MapFS{}
	names := []string{"0001_create_users.yaml", "0002_orders_and_blog.yaml", "0003_user_contact.yaml", "0004_order_currency_and_tags.yaml"}
	for _, n := range names[:top] {
		b, err := fs.ReadFile(migrations.FS, n)
		if err != nil {
			t.Fatal(err)
		}
		files[n] = &fstest.MapFile{Data: b}
	}
	reg, err := version.New(files, version.AllowMissingFuncs(true))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestProtocol(t *testing.T) {
	t.Parallel()
	protocol(t, sandboxtest.Database(t, "release_protocol"))
}

func TestProtocolMongoDB(t *testing.T) {
	protocol(t, sandboxtest.MongoDB(t, "mongomig_test_release", "no real MongoDB: TestProtocol runs the same cases on the sandbox"))
}

// protocol walks the invariants of doc.go: an announcement is live once
// Announce returns, renewed by its heartbeat, gone at Close; two releases
// are listed with the versions each knows, and Behind names the one that
// knows only older versions; a release paused past its TTL expires by the
// server's clock, and its next renewal brings it back and counts the gap.
func protocol(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	oldReg, newReg := registryUpTo(t, 2), registryUpTo(t, 3)
	ttl := 2 * time.Second
	old, err := Announce(ctx, db, oldReg, Options{Name: "r2", TTL: ttl, Renew: ttl / 4})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close(ctx)
	cur, err := Announce(ctx, db, newReg, Options{Name: "r3", TTL: ttl, Renew: ttl / 4})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(ctx)

	live := mustLive(t, db)
	if len(live) != 2 || live[0].Name != "r2" || live[1].Name != "r3" {
		t.Fatalf("live = %+v, want r2 and r3", live)
	}
	if v, ok := live[0].Version("users"); !ok || v != 0 {
		t.Errorf("r2 knows users at %d (%v), want 0 (its files name users, no upgrade yet)", v, ok)
	}
	if v, ok := live[1].Version("users"); !ok || v != 3 {
		t.Errorf("r3 knows users at %d (%v), want 3", v, ok)
	}
	if _, ok := live[0].Version("invoices"); ok {
		t.Errorf("r2 reads invoices, which its files do not name")
	}
	if b := Behind(live, "users", 3); len(b) != 1 || b[0].Name != "r2" {
		t.Errorf("behind for users v3: %v, want r2", b)
	}
	if b := Behind(live, "users", 0); len(b) != 0 {
		t.Errorf("behind for users v0: %v, want none", b)
	}
	if cur.WriteBackOpen("users", 3) {
		t.Errorf("r3's write-backs of users open while r2 is live")
	}
	if b := cur.Behind("users", 3); len(b) != 1 || b[0].Name != "r2" {
		t.Errorf("r3 sees %v behind for users v3, want r2", b)
	}

	// Renewed: expiresAt moves on (by the server's clock).
	first := live[1].ExpiresAt
	waitFor(t, "r3's renewal", func() bool {
		for _, r := range mustLive(t, db) {
			if r.Name == "r3" && r.ExpiresAt.After(first) {
				return true
			}
		}
		return false
	})

	// Paused past its TTL: r2 is no longer live, while r3 stays.
	old.pause()
	waitFor(t, "r2's expiry", func() bool {
		l := mustLive(t, db)
		return len(l) == 1 && l[0].Name == "r3"
	})
	waitFor(t, "r3 seeing r2 gone", func() bool { return cur.WriteBackOpen("users", 3) })
	// Resumed: the next renewal announces it again and counts the gap.
	old.resume()
	waitFor(t, "r2's return", func() bool { return len(mustLive(t, db)) == 2 })
	waitFor(t, "the gap counted", func() bool { return old.Gaps() == 1 })
	waitFor(t, "r3 seeing r2 back", func() bool { return !cur.WriteBackOpen("users", 3) })
	if cur.Gaps() != 0 {
		t.Errorf("r3 counted %d gaps, want 0", cur.Gaps())
	}

	// Closed: deleted at once, no waiting for the TTL.
	if err := old.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if l := mustLive(t, db); len(l) != 1 || l[0].Name != "r3" {
		t.Errorf("after r2's Close: %+v, want r3 only", l)
	}
	if n, err := collection(db, "").CountDocuments(ctx, map[string]any{}); err != nil || n != 1 {
		t.Errorf("documents after Close: %d (%v), want 1", n, err)
	}
}

func TestAnnounceRefusesBadOptions(t *testing.T) {
	ctx := context.Background()
	if _, err := Announce(ctx, nil, nil, Options{}); err == nil {
		t.Error("no name: no error")
	}
	if _, err := Announce(ctx, nil, nil, Options{Name: "x", TTL: time.Second, Renew: time.Second}); err == nil {
		t.Error("Renew = TTL: no error")
	}
}

func mustLive(t *testing.T, db *mongo.Database) []Release {
	t.Helper()
	l, err := Live(context.Background(), db, "")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// waitFor polls cond: the test waits for an event, never for a time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 600; i++ {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not happen", what)
}
