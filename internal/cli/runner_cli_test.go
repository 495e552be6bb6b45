package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// sandboxArgs runs against a sandbox kept in dir with the sample migrations.
func sandboxArgs(dir string, args ...string) []string {
	return append([]string{"--embedded", dir, "--dir", "../../migrations"}, args...)
}

func TestUpStatusDownCycle(t *testing.T) {
	dir := t.TempDir()

	r := run(t, false, sandboxArgs(dir, "status", "--check")...)
	if r.code != ExitCheck || !strings.Contains(r.stdout, "version 0 of 4 (4 pending, 0 drifted)") {
		t.Fatalf("status --check before up: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = run(t, false, sandboxArgs(dir, "up", "--dry-run")...)
	if r.code != 0 || !strings.Contains(r.stdout, "would apply 4 migrations") || !strings.Contains(r.stdout, `{"create":"users","validator":{"$jsonSchema"`) {
		t.Fatalf("dry run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, false, sandboxArgs(dir, "status", "--check")...); r.code != ExitCheck {
		t.Fatalf("the dry run applied something")
	}

	r = run(t, false, sandboxArgs(dir, "up", "--to", "2")...)
	if r.code != 0 || !strings.Contains(r.stdout, "applied 0002_orders_and_blog.yaml") || !strings.Contains(r.stdout, "the database is at version 2") {
		t.Fatalf("up --to 2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "warning: users: the server refused create with a validator") || strings.Count(r.stderr, "warning:") != 2 {
		t.Errorf("want the client-side warning once while applying and once in the summary; stderr:\n%s", r.stderr)
	}

	r = run(t, false, sandboxArgs(dir, "--json", "up")...)
	var up upResult
	if err := json.Unmarshal([]byte(r.stdout), &up); r.code != 0 || err != nil || len(up.Applied) != 2 || up.Current != 4 {
		t.Fatalf("up --json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	r = run(t, false, sandboxArgs(dir, "up")...)
	if r.code != 0 || !strings.Contains(r.stdout, "nothing to apply: the database is at version 4") {
		t.Fatalf("second up: exit %d\n%s", r.code, r.stdout)
	}

	r = run(t, false, sandboxArgs(dir, "status", "--check")...)
	if r.code != 0 || !strings.Contains(r.stdout, "users       0003, client-side only (moderate, error)") {
		t.Fatalf("status after up: exit %d\n%s", r.code, r.stdout)
	}
	r = run(t, false, sandboxArgs(dir, "--json", "status")...)
	var st struct {
		Current     int64 `json:"current"`
		Collections []struct {
			Name        string `json:"name"`
			Enforcement string `json:"enforcement"`
		} `json:"collections"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Current != 4 || len(st.Collections) != 4 {
		t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}

	r = run(t, false, sandboxArgs(dir, "down", "--dry-run")...)
	if r.code != 0 || !strings.Contains(r.stdout, "would revert 1 migration") || !strings.Contains(r.stdout, "0004_order_currency_and_tags.yaml") {
		t.Fatalf("down --dry-run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, false, sandboxArgs(dir, "down", "--to", "2")...)
	if r.code != 0 || !strings.Contains(r.stdout, "reverted 0004_order_currency_and_tags.yaml\nreverted 0003_user_contact.yaml\nthe database is at version 2") {
		t.Fatalf("down --to 2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, false, sandboxArgs(dir, "down", "--to", "3")...)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "nothing to revert: the database is at version 2, not above 3") {
		t.Fatalf("down of something never applied: exit %d\n%s", r.code, r.stderr)
	}
}

func TestUpDriftExits3(t *testing.T) {
	dir, migs := t.TempDir(), t.TempDir()
	src, _ := os.ReadFile("../../migrations/0001_create_users.yaml")
	if err := os.WriteFile(filepath.Join(migs, "0001_create_users.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--embedded", dir, "--dir", migs}
	if r := run(t, false, append(args, "up")...); r.code != 0 {
		t.Fatalf("up: %d %s", r.code, r.stderr)
	}
	// A comment is not drift; a changed validation level is.
	if err := os.WriteFile(filepath.Join(migs, "0001_create_users.yaml"), []byte(strings.Replace(string(src), "validationLevel: strict", "validationLevel: moderate", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, false, append(args, "up")...)
	if r.code != ExitCheck || !strings.Contains(r.stderr, "drift: 0001_create_users.yaml was edited after it was applied") {
		t.Fatalf("drift: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, false, append(args, "status", "--check")...); r.code != ExitCheck || !strings.Contains(r.stdout, "drifted") {
		t.Fatalf("status --check with drift: exit %d\n%s", r.code, r.stdout)
	}
	if r := run(t, false, append(args, "up", "--allow-drift")...); r.code != 0 {
		t.Fatalf("up --allow-drift: exit %d\n%s", r.code, r.stderr)
	}
	// Recorded: the next plain up and status --check pass.
	if r := run(t, false, append(args, "status", "--check")...); r.code != 0 {
		t.Fatalf("status --check after --allow-drift: exit %d\n%s", r.code, r.stdout)
	}
}

func TestLockTimeoutExits4AndUnlock(t *testing.T) {
	dir := t.TempDir()
	// Hold the lock as another process would: through the library.
	if r := run(t, false, sandboxArgs(dir, "unlock")...); r.code != 0 || !strings.Contains(r.stdout, "no lock is held") {
		t.Fatalf("unlock with no lock: %d %s%s", r.code, r.stdout, r.stderr)
	}
	holdLock(t, dir)
	r := run(t, false, sandboxArgs(dir, "up", "--lock-wait", "200ms")...)
	if r.code != ExitLock || !strings.Contains(r.stderr, "migration lock not acquired in time: held by other-process") {
		t.Fatalf("up with the lock held: exit %d\n%s", r.code, r.stderr)
	}
	r = run(t, false, sandboxArgs(dir, "unlock")...)
	if r.code != ExitFailure || !strings.Contains(r.stderr, "has not expired") {
		t.Fatalf("unlock of a live lock: exit %d\n%s", r.code, r.stderr)
	}
	r = run(t, false, sandboxArgs(dir, "unlock", "--force")...)
	if r.code != 0 || !strings.Contains(r.stdout, "removed the lock of other-process") {
		t.Fatalf("unlock --force: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, false, sandboxArgs(dir, "up")...); r.code != 0 {
		t.Fatalf("up after unlock: %d %s", r.code, r.stderr)
	}
}

func TestDemo(t *testing.T) {
	dir := t.TempDir()
	r := run(t, false, "--embedded", dir, "demo")
	if r.code != 0 {
		t.Fatalf("demo: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"loaded 40 users, 60 orders, 12 posts, 36 comments",
		"would apply 4 migrations",
		"applied 0004_order_currency_and_tags.yaml",
		`upgraded: {"_id": {"$oid":"650100000000000000000000"},"name": "Ada Lovelace"`,
		`"contact": {"email": "ada.lovelace0@example.com"},"status": "active","version": {"$numberInt":"3"}}`,
		"validators accept older versions (the window) until a backfill proves none remain",
		"2 documents cannot be upgraded: the upgraded document fails the validator: contact: is required but missing",
		"the demo fixes them now and runs backfill again",
		"done users: 2 documents upgraded to version 3, 40 in all",
		"closed the validator window of users",
		"users       0003, client-side only (moderate, error), window closed  v3: 40     v3",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	// Run again on the same directory: the data and the migrations persist.
	r = run(t, false, "--embedded", dir, "demo")
	if r.code != 0 || !strings.Contains(r.stdout, "the sandbox already holds data (40 users)") || !strings.Contains(r.stdout, "nothing to apply") {
		t.Fatalf("second demo: exit %d\n%s", r.code, r.stdout)
	}
	if r := run(t, false, "--uri", "mongodb://localhost/x", "demo"); r.code != ExitUsage {
		t.Errorf("demo against --uri: exit %d", r.code)
	}
}

// A directory holding data the demo did not load is refused, untouched:
// the demo upgrades and fixes what it finds.
func TestDemoRefusesDataItDidNotLoad(t *testing.T) {
	dir := t.TempDir()
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		if _, err := db.Collection("users").InsertOne(context.Background(), bson.D{{Key: "name", Value: "mine"}}); err != nil {
			t.Fatal(err)
		}
	})
	r := run(t, false, "--embedded", dir, "demo")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "holds data a demo did not load (users)") {
		t.Fatalf("demo on someone's data: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		names, err := db.ListCollectionNames(context.Background(), bson.D{})
		if err != nil || len(names) != 1 || names[0] != "users" {
			t.Errorf("after the refused demo the database holds %v (%v), want only users", names, err)
		}
	})
	// Data in another database of the directory (--db shop) counts too.
	other := t.TempDir()
	sandboxtest.InDir(t, other, "shop", func(db *mongo.Database) {
		if _, err := db.Collection("orders").InsertOne(context.Background(), bson.D{{Key: "n", Value: 1}}); err != nil {
			t.Fatal(err)
		}
	})
	if r := run(t, false, "--embedded", other, "demo"); r.code != ExitUsage || !strings.Contains(r.stderr, "holds data a demo did not load (shop.*)") {
		t.Fatalf("demo beside another database: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestBackfillCommand(t *testing.T) {
	dir := sampleSandbox(t)
	if r := run(t, false, sandboxArgs(dir, "up")...); r.code != 0 {
		t.Fatalf("up: %s", r.stderr)
	}
	// Users 7 and 23 have no email: their upgrade fails 0003's validator,
	// so they are listed, not written, and the exit code says so.
	r := run(t, false, sandboxArgs(dir, "backfill", "--collection", "users", "--batch", "15", "--client-side")...)
	if r.code != ExitFailure || !strings.Contains(r.stdout, "walked users: 38 documents upgraded to version 3") ||
		!strings.Contains(r.stdout, "the upgraded document fails the validator: contact: is required but missing") ||
		!strings.Contains(r.stderr, "documents that could not be upgraded remain") {
		t.Fatalf("backfill with invalid documents: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		if err := sampledata.FixInvalid(context.Background(), db); err != nil {
			t.Fatal(err)
		}
	})
	r = run(t, false, sandboxArgs(dir, "backfill", "--collection", "users", "--batch", "15", "--client-side")...)
	if r.code != 0 || !strings.Contains(r.stdout, "done users: 2 documents upgraded to version 3, 40 in all") {
		t.Fatalf("backfill after the fix: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, false, sandboxArgs(dir, "--json", "backfill", "--max-time", "1ns")...)
	var res struct {
		Stopped string `json:"stopped"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); r.code != 0 || err != nil || res.Stopped != "deadline" {
		t.Fatalf("--max-time: exit %d %v\n%s", r.code, err, r.stdout)
	}
	// On the sandbox the client path is the default (the server-side one
	// reads the whole collection per range there, unguarded); --server-side
	// forces it, with the assumption it needs there.
	r = run(t, false, sandboxArgs(dir, "backfill", "--collection", "orders", "--server-side", "--assume-no-writers")...)
	if r.code != 0 || !strings.Contains(r.stdout, "done orders: 60 documents upgraded to version 4 (60 on the server, no document sent)") {
		t.Fatalf("backfill --server-side after the stop: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, false, sandboxArgs(dir, "backfill")...)
	if r.code != 0 || !strings.Contains(r.stdout, "done comments: 36 documents upgraded to version 4, 36 in all") {
		t.Fatalf("backfill after the stop: exit %d\n%s", r.code, r.stdout)
	}
	if r := run(t, false, sandboxArgs(dir, "status", "--counts")...); !strings.Contains(r.stdout, "  v3: 40  ") || !strings.Contains(r.stdout, "  v4: 60  ") {
		t.Errorf("status after backfill:\n%s", r.stdout)
	}
	if r := run(t, false, sandboxArgs(dir, "backfill", "--batch", "0")...); r.code != ExitUsage {
		t.Errorf("--batch 0: exit %d", r.code)
	}
}

// TestUnlockIgnoresBrokenFiles: a stale lock can be removed even when the
// migration directory does not lint.
func TestUnlockIgnoresBrokenFiles(t *testing.T) {
	dir := t.TempDir()
	holdLock(t, dir)
	r := run(t, false, "--embedded", dir, "--dir", "testdata/broken", "unlock", "--force")
	if r.code != 0 || !strings.Contains(r.stdout, "removed the lock of other-process") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestBackfillLeaseVisibleAndReleasable: a killed backfill's lease shows
// in status with its expiry; unlock --force NAME releases it, and the next
// backfill starts at once (issue 12).
func TestBackfillLeaseVisibleAndReleasable(t *testing.T) {
	dir := t.TempDir()
	if r := run(t, false, sandboxArgs(dir, "up")...); r.code != 0 {
		t.Fatalf("up: %s", r.stderr)
	}
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		_, err := db.Collection("mongomig_lock").InsertOne(context.Background(), bson.D{
			{Key: "_id", Value: "backfill:users"}, {Key: "owner", Value: "killed-backfill"}, {Key: "host", Value: "elsewhere"}, {Key: "pid", Value: 9},
			{Key: "acquiredAt", Value: time.Now()}, {Key: "expiresAt", Value: time.Now().Add(time.Hour)},
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	if r := run(t, false, sandboxArgs(dir, "status")...); !strings.Contains(r.stdout, "backfill:users  held  killed-backfill (host elsewhere, pid 9)  until ") {
		t.Fatalf("status does not show the backfill lease:\n%s", r.stdout)
	}
	if r := run(t, false, sandboxArgs(dir, "backfill", "--collection", "users", "--lock-wait", "100ms")...); r.code != ExitLock ||
		!strings.Contains(r.stderr, "lease backfill:users not acquired in time: held by killed-backfill") ||
		!strings.Contains(r.stderr, "mongomig unlock --force backfill:users") {
		t.Fatalf("backfill with its lease held: exit %d\n%s", r.code, r.stderr)
	}
	// A typo is not "nothing to do"; --force alone names the leases held.
	if r := run(t, false, sandboxArgs(dir, "unlock", "--force", "backfill:user")...); r.code != ExitUsage ||
		!strings.Contains(r.stderr, "no lease backfill:user is held; did you mean backfill:users?") {
		t.Fatalf("unlock --force backfill:user: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, false, sandboxArgs(dir, "unlock", "--force", "users")...); r.code != ExitUsage ||
		!strings.Contains(r.stderr, "no lease users is held; did you mean backfill:users?") {
		t.Fatalf("unlock --force users: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, false, sandboxArgs(dir, "unlock", "backfill:users")...); r.code != ExitFailure ||
		!strings.Contains(r.stderr, "the lease backfill:users is held by killed-backfill") {
		t.Fatalf("unlock backfill:users (live): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, false, sandboxArgs(dir, "unlock", "--force")...); r.code != 0 ||
		!strings.Contains(r.stdout, "the migration lock is not held; to remove another lease, name it: mongomig unlock --force backfill:users") {
		t.Fatalf("unlock --force with only a backfill lease: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, false, sandboxArgs(dir, "unlock", "--force", "backfill:users")...); r.code != 0 || !strings.Contains(r.stdout, "removed the lease backfill:users of killed-backfill") {
		t.Fatalf("unlock --force backfill:users: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, false, sandboxArgs(dir, "backfill", "--collection", "users", "--lock-wait", "100ms")...); r.code == ExitLock {
		t.Fatalf("backfill after unlock still waits: %s", r.stderr)
	}
}

func TestBackfillCommandWorkers(t *testing.T) {
	dir := sampleSandbox(t)
	if r := run(t, false, sandboxArgs(dir, "up")...); r.code != 0 {
		t.Fatalf("up: %s", r.stderr)
	}
	// Order 13's qty 0 fails the validator: listed once, by the sweep.
	r := run(t, false, sandboxArgs(dir, "backfill", "--collection", "orders", "--batch", "5", "--workers", "3")...)
	if r.code != ExitFailure || !strings.Contains(r.stdout, "walked orders: 59 documents upgraded to version 4, 59 in all") ||
		!strings.Contains(r.stdout, "FAIL 1 document cannot be upgraded") ||
		!strings.Contains(r.stdout, "3 _id ranges shared by the workers; split points: every _id below version 4, read in order (the server has no $sample") {
		t.Fatalf("backfill --workers 3: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		if err := sampledata.FixInvalid(context.Background(), db); err != nil {
			t.Fatal(err)
		}
	})
	r = run(t, false, sandboxArgs(dir, "backfill", "--collection", "orders", "--batch", "5", "--workers", "3")...)
	if r.code != 0 || !strings.Contains(r.stdout, "done orders: 1 document upgraded to version 4 (resumed), 60 in all") {
		t.Fatalf("backfill --workers 3 after the fix: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, false, sandboxArgs(dir, "backfill", "--workers", "0")...); r.code != ExitUsage {
		t.Errorf("--workers 0: exit %d", r.code)
	}
}
