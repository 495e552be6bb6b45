package backfill_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// serverMigration is the benchmark migration of BenchmarkBackfillServerMongoDB:
// split a name (a func step), move an email, default a status; its
// validator has no `enum` (servers such as FerretDB 2 refuse every write to
// a collection whose validator uses it). split false leaves the func step
// out: a chain with a func step has no pipeline form, so the server-side
// path is measured without it.
func serverMigration(split bool) fstest.MapFS {
	required, props, step := "[contact, status]", "", ""
	if split {
		required = "[firstName, lastName, contact, status]"
		props = "\n          firstName: {bsonType: string}\n          lastName: {bsonType: string}"
		step = "\n      - func: splitName"
	}
	return fstest.MapFS{"0001_users.yaml": {Data: []byte(`collections:
  users:
    validator:
      $jsonSchema:
        bsonType: object
        required: ` + required + `
        properties:` + props + `
          contact:
            bsonType: object
            required: [email]
            properties:
              email: {bsonType: string}
          status: {bsonType: string}
    validationLevel: moderate
    upgrade:` + step + `
      - rename: {email: contact.email}
      - default: {status: active}
`)}}
}

// splitName is the func step: "First Last" into firstName and lastName.
func splitName(d bson.D) (bson.D, error) {
	out := make(bson.D, 0, len(d)+1)
	for _, e := range d {
		if e.Key != "name" {
			out = append(out, e)
			continue
		}
		s, _ := e.Value.(string)
		first, last, _ := strings.Cut(s, " ")
		out = append(out, bson.E{Key: "firstName", Value: first}, bson.E{Key: "lastName", Value: last})
	}
	return out, nil
}

// serverUser is a version-0 user of the benchmark (a status on one in four).
func serverUser(i int) bson.D {
	d := bson.D{
		{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: fmt.Sprintf("User %d", i)},
		{Key: "email", Value: fmt.Sprintf("u%d@example.com", i)}, {Key: "visits", Value: int32(i)},
	}
	if i%4 == 0 {
		d = append(d, bson.E{Key: "status", Value: "suspended"})
	}
	return d
}

// serverBenchSizes: MONGOMIG_BENCH_DOCS (comma-separated), else 20,000.
func serverBenchSizes() []int {
	if os.Getenv("MONGOMIG_BENCH_DOCS") == "" {
		return []int{20000}
	}
	return benchSizes()
}

// BenchmarkBackfillServerMongoDB upgrades N version-0 users on the server
// of MONGOMIG_TEST_URI (a fresh database each time, loading untimed), like
// with like, in one run:
//   - client/baseline, the fastest guarded program a good engineer would
//     write (one cursor in _id order, the upgrade in Go, unordered bulk
//     writes of 500 UpdateOne filtered on _id and the old value of every
//     field the upgrade changes) against client/mongomig
//     (ClientSide: true, its default batch of 500), with the split;
//   - client/perfield, client/mongomig guarding field by field where one
//     whole-document clause does (version.WholeFilter): what that is
//     worth, in the same run;
//   - client/fields, client/mongomig with the split registered with
//     version.Fields("name", "firstName", "lastName"), so that its guard
//     covers what the baseline's does;
//   - serverside/baseline, a pipeline updateMany per range of 1,000 _ids
//     (boundaries from one _id-only scan), filtered on the version, against
//     serverside/mongomig (the default path where the server has pipeline
//     updates; ranges of DefaultServerRange _ids) and serverside/range1000
//     (ranges of 1,000, as the baseline's), and serverside/hand5000, the
//     baseline's program with mongomig's default range size, without the
//     split; serverside/serial is serverside/mongomig reading each range
//     (its _ids and its check) after the previous range's update, not
//     during it.
//
// Each reports docs/s and, on users, the commands sent (n) and the server
// time they took (s) per kind.
func BenchmarkBackfillServerMongoDB(b *testing.B) {
	uri := os.Getenv("MONGOMIG_TEST_URI")
	if uri == "" {
		b.Skip("MONGOMIG_TEST_URI is not set: this benchmark measures a real server")
	}
	ctx := context.Background()
	for _, n := range serverBenchSizes() {
		var spent *commandCount
		setup := func(b *testing.B, split bool, funcOpts ...version.FuncOption) (*mongo.Database, *runner.Runner) {
			b.StopTimer()
			spent = &commandCount{}
			db := sandboxtest.Connect(b, uri, options.Client().SetMonitor(spent.monitor())).Database("mongomig_bench_server")
			if err := db.Drop(ctx); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = db.Drop(context.Background()) })
			docs := make([]any, 0, 1000)
			for i := 0; i < n; i++ {
				docs = append(docs, serverUser(i))
				if len(docs) == cap(docs) || i == n-1 {
					if _, err := db.Collection("users").InsertMany(ctx, docs); err != nil {
						b.Fatal(err)
					}
					docs = docs[:0]
				}
			}
			r := newRunner(b, db, serverMigration(split), runner.WithVersionOptions(version.WithFunc("splitName", splitName, funcOpts...)))
			if _, err := r.Up(ctx); err != nil {
				b.Fatal(err)
			}
			spent.reset()
			b.StartTimer()
			return db, r
		}
		name := fmt.Sprintf("%dk", n/1000)
		docsPerSec := func(b *testing.B) {
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
			spent.report(b)
		}
		b.Run(name+"/client/baseline", func(b *testing.B) {
			for b.Loop() {
				db, _ := setup(b, true)
				if got := handGuardedUpdates(b, db.Collection("users"), 500); got != n {
					b.Fatalf("baseline upgraded %d of %d", got, n)
				}
			}
			docsPerSec(b)
		})
		b.Run(name+"/client/mongomig", func(b *testing.B) {
			for b.Loop() {
				_, r := setup(b, true)
				res, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}, ClientSide: true})
				if err != nil || res.Collections[0].Upgraded != int64(n) {
					b.Fatalf("%+v %v", res, err)
				}
			}
			docsPerSec(b)
		})
		// What the whole-document guard is worth: mongomig without it.
		b.Run(name+"/client/perfield", func(b *testing.B) {
			for b.Loop() {
				_, r := setup(b, true)
				res, err := backfill.Run(ctx, r, backfill.WithPerFieldGuards(backfill.Options{Collections: []string{"users"}, ClientSide: true}))
				if err != nil || res.Collections[0].Upgraded != int64(n) {
					b.Fatalf("%+v %v", res, err)
				}
			}
			docsPerSec(b)
		})
		// The split declared with version.Fields: the guard then
		// covers what the baseline's does (the fields the upgrade reads and
		// changes, and the version), not every field as read.
		b.Run(name+"/client/fields", func(b *testing.B) {
			for b.Loop() {
				_, r := setup(b, true, version.Fields("name", "firstName", "lastName"))
				res, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}, ClientSide: true})
				if err != nil || res.Collections[0].Upgraded != int64(n) {
					b.Fatalf("%+v %v", res, err)
				}
			}
			docsPerSec(b)
		})
		b.Run(name+"/serverside/baseline", func(b *testing.B) {
			for b.Loop() {
				db, _ := setup(b, false)
				if got := handPipelineRanges(b, db.Collection("users"), 1000); got != n {
					b.Fatalf("baseline upgraded %d of %d", got, n)
				}
			}
			docsPerSec(b)
		})
		// The fastest hand-written program with mongomig's default range
		// size: what mongomig's ranges are worth by themselves.
		b.Run(name+fmt.Sprintf("/serverside/hand%d", backfill.DefaultServerRange), func(b *testing.B) {
			for b.Loop() {
				db, _ := setup(b, false)
				if got := handPipelineRanges(b, db.Collection("users"), backfill.DefaultServerRange); got != n {
					b.Fatalf("baseline upgraded %d of %d", got, n)
				}
			}
			docsPerSec(b)
		})
		for _, size := range []int{0, 1000, -1} {
			prog, opts := "mongomig", backfill.Options{Collections: []string{"users"}, ServerRange: size}
			switch {
			case size > 0:
				prog = fmt.Sprintf("range%d", size)
			case size < 0: // each range read after the previous update
				prog, opts = "serial", backfill.WithSerialReads(backfill.Options{Collections: []string{"users"}})
			}
			b.Run(name+"/serverside/"+prog, func(b *testing.B) {
				for b.Loop() {
					_, r := setup(b, false)
					res, err := backfill.Run(ctx, r, opts)
					if err != nil || res.Collections[0].ServerSide != int64(n) {
						b.Fatalf("%+v %v", res, err)
					}
				}
				docsPerSec(b)
			})
		}
	}
}

// handGuardedUpdates is the client baseline: it returns how many users it
// upgraded.
func handGuardedUpdates(b *testing.B, coll *mongo.Collection, batch int) int {
	ctx := context.Background()
	filter := bson.D{{Key: "version", Value: bson.D{{Key: "$exists", Value: false}}}}
	cur, err := coll.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(int32(batch)))
	if err != nil {
		b.Fatal(err)
	}
	defer cur.Close(ctx)
	models := make([]mongo.WriteModel, 0, batch)
	done := 0
	flush := func() {
		if len(models) == 0 {
			return
		}
		res, err := coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
		if err != nil {
			b.Fatal(err)
		}
		done += int(res.ModifiedCount)
		models = models[:0]
	}
	absent := bson.D{{Key: "$exists", Value: false}}
	for cur.Next(ctx) {
		var u struct {
			ID     bson.ObjectID `bson:"_id"`
			Name   string        `bson:"name"`
			Email  string        `bson:"email"`
			Status *string       `bson:"status"`
		}
		if err := cur.Decode(&u); err != nil {
			b.Fatal(err)
		}
		first, last, _ := strings.Cut(u.Name, " ")
		status, oldStatus := "active", any(absent)
		if u.Status != nil {
			status, oldStatus = *u.Status, *u.Status
		}
		models = append(models, mongo.NewUpdateOneModel().
			SetFilter(bson.D{{Key: "_id", Value: u.ID}, {Key: "name", Value: u.Name}, {Key: "email", Value: u.Email}, {Key: "status", Value: oldStatus}, {Key: "version", Value: absent}}).
			SetUpdate(bson.D{
				{Key: "$set", Value: bson.D{{Key: "firstName", Value: first}, {Key: "lastName", Value: last}, {Key: "contact.email", Value: u.Email}, {Key: "status", Value: status}, {Key: "version", Value: int32(1)}}},
				{Key: "$unset", Value: bson.D{{Key: "name", Value: ""}, {Key: "email", Value: ""}}},
			}))
		if len(models) == batch {
			flush()
		}
	}
	if err := cur.Err(); err != nil {
		b.Fatal(err)
	}
	flush()
	return done
}

// handPipelineRanges is the server-side baseline: one _id-only scan for
// the boundaries of ranges of size _ids, then per range one pipeline
// updateMany filtered on the version (atomic per document, as mongomig's).
func handPipelineRanges(b *testing.B, coll *mongo.Collection, size int) int {
	ctx := context.Background()
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetProjection(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(10000))
	if err != nil {
		b.Fatal(err)
	}
	var bounds []any
	for i := 0; cur.Next(ctx); i++ {
		if i%size == 0 {
			bounds = append(bounds, cur.Current.Lookup("_id"))
		}
	}
	if err := cur.Err(); err != nil {
		b.Fatal(err)
	}
	_ = cur.Close(ctx)
	pipeline := bson.A{
		bson.D{{Key: "$set", Value: bson.D{
			{Key: "contact", Value: bson.D{{Key: "email", Value: "$email"}}},
			{Key: "status", Value: bson.D{{Key: "$ifNull", Value: bson.A{"$status", "active"}}}},
			{Key: "version", Value: int32(1)},
		}}},
		bson.D{{Key: "$unset", Value: "email"}},
	}
	done := 0
	for i, lo := range bounds {
		rng := bson.D{{Key: "$gte", Value: lo}}
		if i+1 < len(bounds) {
			rng = append(rng, bson.E{Key: "$lt", Value: bounds[i+1]})
		}
		res, err := coll.UpdateMany(ctx, bson.D{{Key: "_id", Value: rng}, {Key: "version", Value: bson.D{{Key: "$exists", Value: false}}}}, pipeline)
		if err != nil {
			b.Fatal(err)
		}
		done += int(res.ModifiedCount)
	}
	return done
}

// commandCount counts, per command kind, the commands on users and the
// server time they took (the driver's measure); "meta" is every other
// command (mongomig's state, leases, ledger, probes).
type commandCount struct {
	mu    sync.Mutex
	kinds map[int64]string
	n     map[string]int
	sums  map[string]time.Duration
}

func (c *commandCount) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{
		Started: func(_ context.Context, e *event.CommandStartedEvent) {
			kind, key := e.CommandName, e.CommandName
			if kind == "getMore" {
				kind, key = "find", "collection"
			}
			if coll, ok := e.Command.Lookup(key).StringValueOK(); !ok || coll != "users" {
				kind = "meta"
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.kinds == nil {
				c.kinds, c.n, c.sums = map[int64]string{}, map[string]int{}, map[string]time.Duration{}
			}
			c.kinds[e.RequestID] = kind
			c.n[kind]++
		},
		Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if kind, ok := c.kinds[e.RequestID]; ok {
				c.sums[kind] += e.Duration
				delete(c.kinds, e.RequestID)
			}
		},
	}
}

func (c *commandCount) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.n)
	clear(c.sums)
}

// report gives, per run, the updates, finds (getMores included) and other
// commands (counts, aggregates) on users, and the meta commands: how many
// and their seconds.
func (c *commandCount) report(b *testing.B) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var other time.Duration
	otherN := 0
	for k, d := range c.sums {
		if k != "update" && k != "find" && k != "meta" {
			other += d
			otherN += c.n[k]
		}
	}
	b.ReportMetric(float64(c.n["update"]), "updates")
	b.ReportMetric(c.sums["update"].Seconds(), "update-s")
	b.ReportMetric(float64(c.n["find"]), "finds")
	b.ReportMetric(c.sums["find"].Seconds(), "find-s")
	b.ReportMetric(float64(otherN), "others")
	b.ReportMetric(other.Seconds(), "other-s")
	b.ReportMetric(float64(c.n["meta"]), "meta")
	b.ReportMetric(c.sums["meta"].Seconds(), "meta-s")
}
