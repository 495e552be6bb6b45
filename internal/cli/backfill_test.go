package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

// cancelAfter is a terminal's stderr that cancels the run (as SIGINT does)
// once n progress lines were written: the progress callback runs between
// two batches, so the stop lands at a known point.
type cancelAfter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	n      int
	cancel context.CancelFunc
}

func (w *cancelAfter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(p, []byte("docs/s")) {
		if w.n--; w.n == 0 {
			w.cancel()
		}
	}
	return w.buf.Write(p)
}

// runInterrupted runs mongomig on a terminal and cancels its context after
// the n-th progress line.
func runInterrupted(t *testing.T, n int, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	errw := &cancelAfter{n: n, cancel: cancel}
	code := Run(ctx, args, Streams{In: strings.NewReader(""), Out: &out, Err: errw, OutIsTerminal: false, ErrIsTerminal: true},
		Config{Embedded: startTestSandbox})
	return result{code, out.String(), errw.buf.String()}
}

// TestBackfillInterrupted: a signal stops backfill at a safe point with
// exit 130, as every other command, and the output says so and that a
// rerun continues; a signal landing after the walk's last batch (before
// the proof) says the walk ended, not that documents remain.
func TestBackfillInterrupted(t *testing.T) {
	dir := sampleSandbox(t)
	if r := run(t, false, sandboxArgs(dir, "up")...); r.code != 0 {
		t.Fatalf("up: %s", r.stderr)
	}
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		if err := sampledata.FixInvalid(context.Background(), db); err != nil {
			t.Fatal(err)
		}
	})
	// In batches of 15: after the first of 40 users; after the last of 36
	// comments (15, 15, 6), before the proof.
	for _, c := range []struct {
		coll string
		n    int
	}{{"users", 1}, {"comments", 3}} {
		r := runInterrupted(t, c.n, sandboxArgs(dir, "backfill", "--collection", c.coll, "--batch", "15", "--client-side")...)
		if r.code != ExitInterrupted || !strings.Contains(r.stdout, "stopped by a signal at a safe point") ||
			!strings.Contains(r.stdout, "run backfill again to continue") || strings.Contains(r.stdout, "remain (failures") {
			t.Errorf("%s interrupted after batch %d: exit %d\n%s%s", c.coll, c.n, r.code, r.stdout, r.stderr)
		}
		if c.n == 3 && !strings.Contains(r.stdout, "walked comments") {
			t.Errorf("interrupted after the last batch: the walk did not end\n%s", r.stdout)
		}
	}
	// --max-time is a clean stop: exit 0 (no failure listed yet).
	if r := run(t, false, sandboxArgs(dir, "backfill", "--collection", "orders", "--max-time", "1ns")...); r.code != ExitOK || !strings.Contains(r.stdout, "stopped at --max-time") {
		t.Errorf("--max-time: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestBackfillJSONShape: every key of backfill --json is present whatever
// the run did (stopped and failed used to vanish when empty).
func TestBackfillJSONShape(t *testing.T) {
	dir := sampleSandbox(t)
	if r := run(t, false, sandboxArgs(dir, "up")...); r.code != 0 {
		t.Fatalf("up: %s", r.stderr)
	}
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		if err := sampledata.FixInvalid(context.Background(), db); err != nil {
			t.Fatal(err)
		}
	})
	r := run(t, false, sandboxArgs(dir, "--json", "backfill", "--collection", "posts")...)
	var res map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &res); r.code != 0 || err != nil {
		t.Fatalf("exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if v, ok := res["stopped"]; !ok || v != "" {
		t.Errorf("stopped = %v (present %v), want \"\"", v, ok)
	}
	c := res["collections"].([]any)[0].(map[string]any)
	for _, k := range []string{"collection", "target", "upgraded", "totalUpgraded", "conflicts", "failed", "resumed", "complete", "proven",
		"serverSide", "serverSideNote", "ranges", "rangeSplit", "rangesNote", "batches", "roundTrips", "durationMs"} {
		if _, ok := c[k]; !ok {
			t.Errorf("collection result lacks %q: %s", k, r.stdout)
		}
	}
	if f, ok := c["failed"].([]any); !ok || len(f) != 0 {
		t.Errorf("failed = %#v, want []", c["failed"])
	}
	if len(c) != 17 {
		t.Errorf("%d keys, want the 17 documented in docs/cli.md: %s", len(c), r.stdout)
	}
}

// TestBackfillFailuresGrouped: 36 documents with an invalid version or
// progress marker print as two groups with a few _ids each, quoting no
// more than an excerpt of a value (each used to print as a group of its
// own, its whole value quoted).
func TestBackfillFailuresGrouped(t *testing.T) {
	dir := sampleSandbox(t)
	if r := run(t, false, sandboxArgs(dir, "up")...); r.code != 0 {
		t.Fatalf("up: %s", r.stderr)
	}
	secret := strings.Repeat("private-data-", 20)
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		ctx := context.Background()
		if err := sampledata.FixInvalid(ctx, db); err != nil {
			t.Fatal(err)
		}
		var docs []any
		for i := 0; i < 18; i++ {
			docs = append(docs,
				bson.D{{Key: "_id", Value: fmt.Sprintf("badver-%02d", i)}, {Key: "version", Value: fmt.Sprint(secret, i)}},
				bson.D{{Key: "_id", Value: fmt.Sprintf("badmark-%02d", i)}, {Key: version.MarkerField, Value: fmt.Sprint(secret, i)}})
		}
		if _, err := db.Collection("users").InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	})
	r := run(t, false, sandboxArgs(dir, "backfill", "--collection", "users", "--client-side")...)
	if r.code != ExitFailure || strings.Count(r.stdout, "FAIL") != 2 || strings.Count(r.stdout, "FAIL 18 documents") != 2 ||
		!strings.Contains(r.stdout, "(and 13 more)") || strings.Contains(r.stdout, strings.Repeat("private-data-", 2)) {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
