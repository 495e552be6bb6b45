package runner_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/runner"
)

func statusOf(t *testing.T, r *runner.Runner, opts runner.StatusOptions) *runner.Status {
	t.Helper()
	st, err := r.StatusOf(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func anomalyKinds(c runner.CollectionStatus) []string {
	var out []string
	for _, a := range c.Anomalies {
		out = append(out, a.Kind)
	}
	return out
}

// TestStatusShowsTheDeploy walks a collection's deploy: before the
// backfill, a backfill stopped half-way, resumed and proven, the window
// closing, and an old release writing after the closure. Each stage is
// visible in status, and the last is an anomaly (not Clean).
func TestStatusShowsTheDeploy(t *testing.T) {
	ctx := context.Background()
	db, _, r := sampleApplied(t)
	counts := runner.StatusOptions{Counts: true}

	users := collStatus(statusOf(t, r, counts), "users")
	if users.Backfill != nil || !strings.Contains(users.NextUp, "leaves the window of users open") || len(users.Anomalies) != 0 {
		t.Fatalf("before the backfill: backfill %+v, next up %q, anomalies %+v", users.Backfill, users.NextUp, users.Anomalies)
	}

	// A backfill stopped after its first batch (as by --max-time or a signal).
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	stopper := fixtures.NewRunner(t, db, fixtures.Samples(t), runner.WithLogger(events.LoggerFunc(func(e events.Entry) {
		if _, ok := e.(events.BackfillBatch); ok {
			stop()
		}
	})))
	res, err := backfill.Run(stopCtx, stopper, backfill.Options{Collections: []string{"users"}, Batch: 5, Progress: true})
	if err != nil || res.Stopped != backfill.StoppedInterrupted {
		t.Fatalf("stopped backfill: %+v %v", res, err)
	}
	st := statusOf(t, r, counts)
	b := collStatus(st, "users").Backfill
	if b == nil || b.Upgraded != 5 || !b.Resumable || b.Proven || b.Done || b.Remaining == nil || *b.Remaining != 35 || b.LastRun == nil || b.Target != 3 {
		t.Fatalf("after a stopped backfill: %+v", b)
	}
	if !strings.Contains(collStatus(st, "users").NextUp, "leaves the window of users open") {
		t.Errorf("next up after a stopped backfill: %q", collStatus(st, "users").NextUp)
	}

	// Resumed to the end: proven, and the next up closes the window.
	if _, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}}); err != nil {
		t.Fatal(err)
	}
	users = collStatus(statusOf(t, r, counts), "users")
	if b := users.Backfill; b == nil || b.Upgraded != 40 || b.Resumable || !b.Proven || b.ProvenAt == nil || !b.Done || *b.Remaining != 0 {
		t.Fatalf("after the resumed backfill: %+v", b)
	}
	if !strings.Contains(users.NextUp, "closes the window of users") {
		t.Errorf("next up after the proof: %q", users.NextUp)
	}
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	st = statusOf(t, r, counts)
	if users = collStatus(st, "users"); users.Window != "closed" || users.NextUp != "" || !st.Clean() {
		t.Fatalf("after up closed the window: window %q, next up %q, clean %v %+v", users.Window, users.NextUp, st.Clean(), users.Anomalies)
	}

	// A forgotten old pod writes a version-0 user after the closure (the
	// sandbox enforces no validator, as a warn action would let it in),
	// and a release with other files one at version 2.
	if _, err := db.Collection("users").InsertMany(ctx, []any{
		bson.D{{Key: "name", Value: "Old pod"}, {Key: "email", Value: "old@x"}},
		bson.D{{Key: "name", Value: "Other"}, {Key: "version", Value: 2}},
	}); err != nil {
		t.Fatal(err)
	}
	st = statusOf(t, r, counts)
	users = collStatus(st, "users")
	if got := strings.Join(anomalyKinds(users), ","); got != runner.AnomalyBelowClosed+","+runner.AnomalyUnknownVersion || st.Clean() {
		t.Fatalf("anomalies after old writes = %q (clean %v): %+v", got, st.Clean(), users.Anomalies)
	}
	if a := users.Anomalies[0]; a.Count != 1 || !strings.Contains(a.Message, "below version 3 although the window was closed") {
		t.Errorf("below-after-close anomaly = %+v", a)
	}
	if a := users.Anomalies[1]; a.Count != 1 || len(a.Versions) != 1 || a.Versions[0] != "2" {
		t.Errorf("unknown-version anomaly = %+v", a)
	}
	// --check without --counts finds them with queries (limit 1).
	st = statusOf(t, r, runner.StatusOptions{Check: true})
	if got := strings.Join(anomalyKinds(collStatus(st, "users")), ","); got != runner.AnomalyBelowClosed+","+runner.AnomalyUnknownVersion || st.Clean() {
		t.Errorf("anomalies found by --check alone = %q", got)
	}
}

// TestStatusServerDrift: indexes created, dropped or changed by hand are
// drift of the server (the server checked against the applied files).
func TestStatusServerDrift(t *testing.T) {
	ctx := context.Background()
	db, _, r := sampleApplied(t)
	if st := statusOf(t, r, runner.StatusOptions{}); !st.Clean() {
		t.Fatalf("status after up is not clean: %+v", st.Collections)
	}
	users := db.Collection("users")
	if _, err := users.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := users.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "email", Value: 1}}, Options: options.Index().SetName("email_1")}); err != nil {
		t.Fatal(err)
	}
	if err := users.Indexes().DropOne(ctx, "contact.email_1"); err != nil {
		t.Fatal(err)
	}
	st := statusOf(t, r, runner.StatusOptions{})
	var got []string
	for _, d := range collStatus(st, "users").ServerDrift {
		got = append(got, d.Message)
	}
	want := []string{
		"users: index email_1 exists; 0003 drops it",
		"users: index contact.email_1 does not exist; 0003 creates it",
		"users: index name_1 exists, no migration creates it",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || st.Clean() {
		t.Errorf("server drift =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestStatusServerDriftMongoDB checks validators, levels and index
// options against a server that keeps them: clean right after up, then
// each change made by hand is named.
func TestStatusServerDriftMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_status_drift", "needs a server that keeps validators and index options (indexes created and dropped by hand are checked on the sandbox by TestStatusServerDrift)")
	ctx := context.Background()
	fsys, refused := fixtures.EnforceableSamples(t, db)
	r := newRunner(t, db, fsys, runner.WithClientSideValidators(slices.Sorted(maps.Keys(refused))...))
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if st := statusOf(t, r, runner.StatusOptions{}); !st.Clean() {
		for _, c := range st.Collections {
			t.Errorf("%s: drift right after up: %+v", c.Name, c.ServerDrift)
		}
		t.FailNow()
	}
	// By hand: users strict (0003 declares moderate), another validator,
	// and contact.email_1 rebuilt without sparse.
	if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: "users"}, {Key: "validationLevel", Value: "strict"},
		{Key: "validator", Value: bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "bsonType", Value: "object"}}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	users := db.Collection("users")
	if err := users.Indexes().DropOne(ctx, "contact.email_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := users.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "contact.email", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatal(err)
	}
	st := statusOf(t, r, runner.StatusOptions{})
	var got []string
	for _, d := range collStatus(st, "users").ServerDrift {
		got = append(got, d.What+": "+d.Message)
	}
	text := strings.Join(got, "\n")
	for _, want := range []string{
		"validator: users: the validator differs from 0003's",
		"validationLevel: users: validationLevel is strict on the server; 0003 declares moderate",
		"index contact.email_1: users: index contact.email_1 has sparse none on the server; 0003 creates it with sparse true",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("server drift lacks %q:\n%s", want, text)
		}
	}
	if st.Clean() {
		t.Error("status is clean with the server changed by hand")
	}
}
