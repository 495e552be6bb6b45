package backfill_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
)

// handUserRaw is 0003_user_contact's upgrade of a version-0 user written by
// hand on raw BSON, the way the fastest one-off program would: copy the
// elements that stay, append contact.email, the default status and the
// version. It returns the _id and the new document.
func handUserRaw(raw bson.Raw, dst []byte) (bson.RawValue, []byte) {
	var id, email bson.RawValue
	hasStatus := false
	idx, dst := bsoncore.AppendDocumentStart(dst[:0])
	elems, _ := raw.Elements()
	for _, e := range elems {
		switch e.Key() {
		case "email":
			email = e.Value()
			continue
		case "legacyId", "version":
			continue
		case "status":
			hasStatus = true
		case "_id":
			id = e.Value()
		}
		dst = append(dst, e...)
	}
	if email.Type != 0 {
		cidx, c := bsoncore.AppendDocumentElementStart(dst, "contact")
		c = bsoncore.AppendValueElement(c, "email", bsoncore.Value{Type: bsoncore.Type(email.Type), Data: email.Value})
		dst, _ = bsoncore.AppendDocumentEnd(c, cidx)
	}
	if !hasStatus {
		dst = bsoncore.AppendStringElement(dst, "status", "active")
	}
	dst = bsoncore.AppendInt32Element(dst, "version", 3)
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return id, dst
}

// TestHandUserRawMatches keeps the end-to-end baseline correct: it gives
// the documents the registry gives (fields compared in name order: the
// baseline replaces, the backfill adds fields with $set).
func TestHandUserRawMatches(t *testing.T) {
	r := newRunner(t, sandboxtest.Database(t, "app"), samples(t))
	for i := 0; i < 6; i++ {
		raw, _ := bson.Marshal(v0User(i))
		var d bson.D
		_ = bson.Unmarshal(raw, &d)
		want, _, err := r.Registry().Upgrade("users", d)
		if err != nil {
			t.Fatal(err)
		}
		_, got := handUserRaw(raw, nil)
		var gd bson.D
		if err := bson.Unmarshal(got, &gd); err != nil {
			t.Fatal(err)
		}
		for _, x := range []bson.D{want, gd} {
			sort.SliceStable(x, func(i, j int) bool { return x[i].Key < x[j].Key })
		}
		wb, _ := bson.MarshalExtJSON(want, false, false)
		gb, _ := bson.MarshalExtJSON(gd, false, false)
		if string(wb) != string(gb) {
			t.Errorf("user %d:\n baseline %s\n registry %s", i, gb, wb)
		}
	}
}

// benchSizes are the collection sizes of BenchmarkBackfillEndToEnd:
// MONGOMIG_BENCH_DOCS (comma-separated), else 1,000 and 20,000.
func benchSizes() []int {
	sizes := []int{1000, 20000}
	if v := os.Getenv("MONGOMIG_BENCH_DOCS"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
				sizes = append(sizes, n)
			}
		}
	}
	return sizes
}

// serverSideMax is the largest size the server-side path is measured at on
// the sandbox: FerretDB v1 evaluates each updateMany's range filter by
// reading the whole collection, so that path is quadratic there (and off by
// default; see docs/backfill.md).
const serverSideMax = 1000

// BenchmarkBackfillEndToEnd upgrades N version-0 users on a fresh sandbox
// (0003_user_contact: rename, default, unset), like with like:
//   - guarded/baseline: the fastest hand-written program that guards its
//     writes (one cursor, the upgrade on raw BSON, unordered bulk writes of
//     50 ReplaceOne filtered on _id and the old value of every field the
//     upgrade changes, 50 being the sandbox's safe bulk size), against
//     guarded/mongomig, mongomig's default client path (guarded on every
//     server), and guarded/workers2, the same with two workers;
//   - unguarded/baseline: the same program filtering on _id alone, against
//     unguarded/mongomig (AssumeNoWriters, --assume-no-writers) and
//     unguarded/serverside (the marker path, which the sandbox cannot
//     guard, at N <= serverSideMax).
//
// Loading is not timed. Each reports documents per second; benchratio
// prints each over its group's baseline, in the same run, and workers2
// over mongomig.
func BenchmarkBackfillEndToEnd(b *testing.B) {
	const batch = 50
	ctx := context.Background()
	for _, n := range benchSizes() {
		// setup loads n users and applies the sample migrations (the
		// indexes of 0003 included), untimed; every program then starts
		// from the same state.
		var spent *commandTime
		setup := func(b *testing.B) (*mongo.Database, *runner.Runner) {
			b.StopTimer()
			spent = &commandTime{}
			db := sandboxtest.Connect(b, sandboxtest.Start(b).URI(), options.Client().SetMonitor(spent.monitor())).Database("app")
			docs := make([]any, 0, 1000)
			for i := 0; i < n; i++ {
				docs = append(docs, v0User(i))
				if len(docs) == cap(docs) || i == n-1 {
					if _, err := db.Collection("users").InsertMany(ctx, docs); err != nil {
						b.Fatal(err)
					}
					docs = docs[:0]
				}
			}
			r := newRunner(b, db, samples(b))
			if _, err := r.Up(ctx); err != nil {
				b.Fatal(err)
			}
			spent.reset()
			b.StartTimer()
			return db, r
		}
		name := fmt.Sprintf("%dk", n/1000)
		for _, guarded := range []bool{true, false} {
			group := name + "/unguarded"
			if guarded {
				group = name + "/guarded"
			}
			b.Run(group+"/baseline", func(b *testing.B) {
				for b.Loop() {
					db, _ := setup(b)
					if got := handWrittenBackfill(b, db.Collection("users"), batch, guarded); got != n {
						b.Fatalf("baseline rewrote %d of %d", got, n)
					}
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
			})
			b.Run(group+"/mongomig", func(b *testing.B) {
				for b.Loop() {
					_, r := setup(b)
					res, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}, Batch: batch, ClientSide: true, AssumeNoWriters: !guarded})
					if err != nil || res.Collections[0].Upgraded != int64(n) {
						b.Fatalf("%+v %v", res, err)
					}
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
				spent.report(b)
			})
		}
		b.Run(name+"/guarded/workers2", func(b *testing.B) {
			for b.Loop() {
				_, r := setup(b)
				res, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}, Batch: batch, ClientSide: true, Workers: 2})
				if err != nil || res.Collections[0].Upgraded != int64(n) || !res.Collections[0].Proven {
					b.Fatalf("%+v %v", res, err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
			spent.report(b)
		})
		if n > serverSideMax {
			continue
		}
		b.Run(name+"/unguarded/serverside", func(b *testing.B) {
			for b.Loop() {
				_, r := setup(b)
				res, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}, Batch: batch, ServerSide: true, AssumeNoWriters: true})
				if err != nil || res.Collections[0].ServerSide != int64(n) {
					b.Fatalf("%+v %v", res, err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}

// handWrittenBackfill is the baseline program: it returns how many
// documents it rewrote. guarded filters each replace on the old value of
// every field the upgrade changes (email, status, legacyId, version), as
// a program must that runs beside the application.
func handWrittenBackfill(b *testing.B, coll *mongo.Collection, batch int, guarded bool) int {
	ctx := context.Background()
	filter := bson.D{{Key: "version", Value: bson.D{{Key: "$exists", Value: false}}}}
	cur, err := coll.Find(ctx, filter)
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
		done += int(res.MatchedCount)
		models = models[:0]
	}
	for cur.Next(ctx) {
		id, doc := handUserRaw(cur.Current, nil)
		filter := bson.D{{Key: "_id", Value: id}}
		if guarded {
			filter = handGuard(cur.Current, filter)
		}
		models = append(models, mongo.NewReplaceOneModel().SetFilter(filter).SetReplacement(bson.Raw(doc)))
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

// commandTime adds up, per kind, the time the server took to answer the
// commands on the users collection (a command's duration as the driver
// measured it; two workers' commands overlap, so the sums can exceed the
// wall time): where an end-to-end run spends its time.
type commandTime struct {
	mu    sync.Mutex
	kinds map[int64]string
	sums  map[string]time.Duration
}

func (c *commandTime) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{
		Started: func(_ context.Context, e *event.CommandStartedEvent) {
			kind, key := e.CommandName, e.CommandName
			if kind == "getMore" {
				kind, key = "find", "collection"
			}
			if coll, ok := e.Command.Lookup(key).StringValueOK(); !ok || coll != "users" {
				return
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.kinds == nil {
				c.kinds, c.sums = map[int64]string{}, map[string]time.Duration{}
			}
			c.kinds[e.RequestID] = kind
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

func (c *commandTime) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.sums)
}

// report gives the seconds spent in updates (the writes), in finds and
// getMores (the reads: a cursor's first batch includes FerretDB's sort of
// the whole result) and in the rest (counts) of users.
func (c *commandTime) report(b *testing.B) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var other time.Duration
	for k, d := range c.sums {
		if k != "update" && k != "find" {
			other += d
		}
	}
	b.ReportMetric(c.sums["update"].Seconds(), "update-s")
	b.ReportMetric(c.sums["find"].Seconds(), "find-s")
	b.ReportMetric(other.Seconds(), "other-s")
}

// handGuard adds to filter the old value (or absence) of each field
// 0003's upgrade changes.
func handGuard(raw bson.Raw, filter bson.D) bson.D {
	for _, f := range []string{"email", "status", "legacyId", "version"} {
		if v, err := raw.LookupErr(f); err == nil {
			filter = append(filter, bson.E{Key: f, Value: v})
		} else {
			filter = append(filter, bson.E{Key: f, Value: bson.D{{Key: "$exists", Value: false}}})
		}
	}
	return filter
}
