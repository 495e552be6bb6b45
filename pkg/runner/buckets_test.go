package runner_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
)

const eventsV1 = `buckets:
  "events_{yyyy}_{mm}":
    period: month
    ahead: 2
    keep: 3
    validator:
      $jsonSchema: {bsonType: object, required: [at]}
    indexes:
      create:
        - keys: {at: 1}
`

const eventsV2 = `buckets:
  "events_{yyyy}_{mm}":
    validator:
      $jsonSchema: {bsonType: object, required: [at, kind]}
    indexes:
      create:
        - keys: {kind: 1}
`

var july = time.Date(2025, time.July, 9, 12, 0, 0, 0, time.UTC)

func eventsRunner(t *testing.T, db *mongo.Database, at time.Time, files ...string) *runner.Runner {
	t.Helper()
	fsys := fstest.MapFS{}
	for i, f := range files {
		fsys[[]string{"0001_events.yaml", "0002_events_kind.yaml"}[i]] = &fstest.MapFile{Data: []byte(f)}
	}
	r, err := runner.New(db, fsys, runner.WithBucketsAt(at), runner.WithLockWait(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func collNames(t *testing.T, db *mongo.Database) []string {
	t.Helper()
	names, err := db.ListCollectionNames(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if !strings.HasPrefix(n, "mongomig_") {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func creates(run *runner.BucketRun) (n int) {
	for _, c := range run.Commands {
		if c.Name == "create" {
			n++
		}
	}
	return n
}

// TestBucketsKeepAndAhead: up creates the current month's member and two
// ahead, drops the member older than the three months kept, and leaves
// alone every collection the pattern does not name; a later run, a month
// on, creates one more member and drops one; run again it sends nothing.
func TestBucketsKeepAndAhead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sandboxtest.Database(t, "buckets")
	for _, name := range []string{"events_2025_01", "events_2025_05", "events_2025_1", "events_archive", "events_2025_07_old"} {
		if err := db.CreateCollection(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	r := eventsRunner(t, db, july, eventsV1)
	res, err := r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Buckets == nil || creates(res.Buckets) != 3 {
		t.Fatalf("up's buckets = %+v", res.Buckets)
	}
	want := []string{"events_2025_05", "events_2025_07", "events_2025_07_old", "events_2025_08", "events_2025_09", "events_2025_1", "events_archive"}
	if got := collNames(t, db); !slices.Equal(got, want) {
		t.Errorf("after up: %v, want %v", got, want)
	}
	aug := july.AddDate(0, 1, 0)
	run, err := r.Buckets(ctx, runner.BucketOptions{At: aug})
	if err != nil {
		t.Fatal(err)
	}
	if f := run.Families[0]; !slices.Equal(f.Create, []string{"events_2025_10"}) || !slices.Equal(f.Drop, []string{"events_2025_05"}) {
		t.Errorf("a month on: create %v, drop %v", f.Create, f.Drop)
	}
	again, err := r.Buckets(ctx, runner.BucketOptions{At: aug})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Commands) != 0 {
		t.Errorf("run again, buckets sent %v", again.Commands)
	}
	st, err := r.StatusOf(ctx, runner.StatusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var undeclared []string
	for _, u := range st.Undeclared {
		undeclared = append(undeclared, u.Name)
	}
	if !slices.Equal(undeclared, []string{"events_2025_07_old", "events_2025_1", "events_archive"}) {
		t.Errorf("undeclared = %v", undeclared)
	}
}

// TestBucketsTwoAtOnce: two processes running buckets at once send each
// member's create once between them (the migration lock orders them; the
// second finds every member as declared).
func TestBucketsTwoAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sandboxtest.Database(t, "buckets2")
	if _, err := eventsRunner(t, db, july.AddDate(-1, 0, 0), eventsV1).Up(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	runs := make([]*runner.BucketRun, 2)
	errs := make([]error, 2)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i], errs[i] = eventsRunner(t, db, july, eventsV1).Buckets(ctx, runner.BucketOptions{At: july})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := creates(runs[0]) + creates(runs[1]); n != 3 {
		t.Errorf("the two runs sent %d creates, want 3 (July to September once)", n)
	}
	if creates(runs[0]) != 0 && creates(runs[1]) != 0 {
		t.Errorf("both runs created members: %d and %d", creates(runs[0]), creates(runs[1]))
	}
	for _, name := range []string{"events_2025_07", "events_2025_08", "events_2025_09"} {
		if !slices.Contains(collNames(t, db), name) {
			t.Errorf("%s missing", name)
		}
	}
}

// TestBucketsLaterValidatorMongoDB: on a server that keeps validators, a
// new member gets the validator and indexes the latest applied migration
// declares for the family, and the members kept are changed to them.
func TestBucketsLaterValidatorMongoDB(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.MongoDB(t, "mongomig_buckets_validator", "TestBucketsKeepAndAhead covers the members on the sandbox, which keeps no validator")
	if _, err := eventsRunner(t, db, july, eventsV1).Up(ctx); err != nil {
		t.Fatal(err)
	}
	r := eventsRunner(t, db, july, eventsV1, eventsV2)
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	run, err := r.Buckets(ctx, runner.BucketOptions{At: july.AddDate(0, 1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if f := run.Families[0]; !slices.Equal(f.Create, []string{"events_2025_10"}) {
		t.Fatalf("create %v", f.Create)
	}
	for _, name := range []string{"events_2025_08", "events_2025_10"} {
		specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: name}})
		if err != nil || len(specs) != 1 {
			t.Fatalf("%s: %v %v", name, specs, err)
		}
		if v := specs[0].Options.Lookup("validator").String(); !strings.Contains(v, `"kind"`) {
			t.Errorf("%s's validator = %s, want the second migration's", name, v)
		}
		idx, err := db.Collection(name).Indexes().ListSpecifications(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range idx {
			names = append(names, s.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"_id_", "at_1", "kind_1"}) {
			t.Errorf("%s's indexes = %v", name, names)
		}
	}
	// The server enforces the member's validator.
	if _, err := db.Collection("events_2025_10").InsertOne(ctx, bson.D{{Key: "at", Value: july}}); err == nil {
		t.Error("a document without kind was accepted by the new member")
	}
}
