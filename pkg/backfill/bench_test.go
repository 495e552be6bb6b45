package backfill_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
)

// v0User is a users document before mongomig, as the sample data has them.
func v0User(i int) bson.D {
	d := bson.D{
		{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: fmt.Sprintf("User %d", i)},
		{Key: "email", Value: fmt.Sprintf("u%d@example.com", i)}, {Key: "createdAt", Value: bson.DateTime(1700000000000)},
		{Key: "plan", Value: "free"}, {Key: "visits", Value: int32(i)},
	}
	if i%3 == 0 {
		d = append(d, bson.E{Key: "legacyId", Value: int32(1000 + i)})
	}
	return d
}

// handUserModel is 0003_user_contact's upgrade written by hand into the
// same guarded write model the backfill builds.
func handUserModel(d bson.D) mongo.WriteModel {
	var id, email, legacy, status, contact any
	hasEmail, hasLegacy, hasStatus, hasContact := false, false, false, false
	for _, e := range d {
		switch e.Key {
		case "_id":
			id = e.Value
		case "email":
			email, hasEmail = e.Value, true
		case "legacyId":
			legacy, hasLegacy = e.Value, true
		case "status":
			status, hasStatus = e.Value, true
		case "contact":
			contact, hasContact = e.Value, true
		}
	}
	// A correct guard never matches an array holding the old value
	// (MongoDB compares a value with an array's elements).
	notArray := bson.E{Key: "$not", Value: bson.D{{Key: "$type", Value: "array"}}}
	filter := bson.D{{Key: "_id", Value: id}}
	set := bson.D{}
	unset := bson.D{}
	if hasEmail {
		set = append(set, bson.E{Key: "contact", Value: bson.D{{Key: "email", Value: email}}})
		filter = append(filter, bson.E{Key: "contact", Value: bson.D{{Key: "$exists", Value: false}}})
	}
	if !hasStatus {
		set = append(set, bson.E{Key: "status", Value: "active"})
		filter = append(filter, bson.E{Key: "status", Value: bson.D{{Key: "$exists", Value: false}}})
	}
	set = append(set, bson.E{Key: "version", Value: int32(3)})
	filter = append(filter, bson.E{Key: "version", Value: bson.D{{Key: "$exists", Value: false}}})
	if hasEmail {
		unset = append(unset, bson.E{Key: "email", Value: ""})
		filter = append(filter, bson.E{Key: "email", Value: bson.D{{Key: "$eq", Value: email}, notArray}})
	}
	if hasLegacy {
		unset = append(unset, bson.E{Key: "legacyId", Value: ""})
		filter = append(filter, bson.E{Key: "legacyId", Value: bson.D{{Key: "$eq", Value: legacy}, notArray}})
	}
	// A correct write-back guards the server-side backfill's step marker.
	filter = append(filter, bson.E{Key: "_mongomig_step", Value: bson.D{{Key: "$exists", Value: false}}})
	// And every field the upgrade read but left alone, as read: a writer
	// who set one since (an email the rename should have moved) must make
	// the write match nothing.
	same := func(k string, v any, had bool) {
		if had {
			filter = append(filter, bson.E{Key: k, Value: bson.D{{Key: "$eq", Value: v}, notArray}})
		} else {
			filter = append(filter, bson.E{Key: k, Value: bson.D{{Key: "$exists", Value: false}}})
		}
	}
	if !hasEmail {
		same("email", nil, false)
		same("contact", contact, hasContact)
	}
	if hasStatus {
		same("status", status, true)
	}
	if !hasLegacy {
		same("legacyId", nil, false)
	}
	update := bson.D{{Key: "$set", Value: set}}
	if len(unset) > 0 {
		update = append(update, bson.E{Key: "$unset", Value: unset})
	}
	return mongo.NewUpdateOneModel().SetFilter(filter).SetUpdate(update)
}

// TestHandUserModelMatches keeps the baseline honest: it builds exactly
// the write model the backfill builds.
func TestHandUserModelMatches(t *testing.T) {
	r := newRunner(t, sandboxtest.Database(t, "app"), samples(t))
	for i := 0; i < 6; i++ {
		d := v0User(i)
		raw, _ := bson.Marshal(d)
		got := backfill.UpgradeModels(r, "users", []bson.Raw{raw}, []bson.D{d})[0].(*mongo.UpdateOneModel)
		want := handUserModel(d).(*mongo.UpdateOneModel)
		gf, _ := bson.MarshalExtJSON(got.Filter, false, false)
		wf, _ := bson.MarshalExtJSON(want.Filter, false, false)
		gu, _ := bson.MarshalExtJSON(got.Update, false, false)
		wu, _ := bson.MarshalExtJSON(want.Update, false, false)
		if string(gf) != string(wf) || string(gu) != string(wu) {
			t.Errorf("doc %d:\n backfill %s %s\n baseline %s %s", i, gf, gu, wf, wu)
		}
	}
}

// BenchmarkBackfillClient is the backfill's client work per document
// (decode the raw document read, upgrade, validate the result against the
// validator of its version, build the guarded write) against
// the same transformation written by hand into the same write model. No
// server: the sandbox's write path would hide the client's cost.
func BenchmarkBackfillClient(b *testing.B) {
	r := newRunner(b, sandboxtest.Database(b, "app"), samples(b))
	raws := make([]bson.Raw, 1000)
	for i := range raws {
		raws[i], _ = bson.Marshal(v0User(i))
	}
	decode := func() []bson.D {
		docs := make([]bson.D, len(raws))
		for i, raw := range raws {
			if err := bson.Unmarshal(raw, &docs[i]); err != nil {
				b.Fatal(err)
			}
		}
		return docs
	}
	mongomig := func() {
		if n := len(backfill.UpgradeModels(r, "users", raws, decode())); n != len(raws) {
			b.Fatalf("%d models", n)
		}
	}
	baseline := func() {
		docs := decode()
		models := make([]mongo.WriteModel, 0, len(docs))
		for _, d := range docs {
			models = append(models, handUserModel(d))
		}
		if len(models) != len(raws) {
			b.Fatal("models")
		}
	}
	// Both run a few times before either is timed: the half timed first
	// would otherwise also pay for growing the heap from the sandbox's
	// start-up size, which the second then reuses.
	for range 5 {
		mongomig()
		baseline()
	}
	b.Run("mongomig", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mongomig()
		}
	})
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			baseline()
		}
	})
}

// BenchmarkBackfillMemory reports the peak heap while a backfill walks
// 20k and 200k documents on the read path: documents whose upgrade fails
// (contact is a string, so the rename into contact.email cannot apply), so
// every batch is read and nothing is written, so the
// figure is the read path's alone. Memory must not grow with the collection: a
// batch at a time, failures grouped with five example ids. The sandbox
// runs in a process of its own, so only the backfill's heap is measured
// (FerretDB sorts each query's result in memory).
func BenchmarkBackfillMemory(b *testing.B) {
	for _, n := range []int{20_000, 200_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			ctx := context.Background()
			server, uri := serveProcess(b, b.TempDir(), "")
			b.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
			db := sandboxtest.Connect(b, uri).Database("app")
			docs := make([]any, 0, 1000)
			for i := 0; i < n; i++ {
				docs = append(docs, bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: fmt.Sprint("user ", i)}, {Key: "email", Value: fmt.Sprintf("u%d@x", i)}, {Key: "contact", Value: "not a document"}})
				if len(docs) == cap(docs) || i == n-1 {
					if _, err := db.Collection("users").InsertMany(ctx, docs); err != nil {
						b.Fatal(err)
					}
					docs = docs[:0]
				}
			}
			r := newRunner(b, db, samples(b))
			if _, err := r.Up(ctx); err != nil { // backfill needs the migrations applied
				b.Fatal(err)
			}
			var peak uint64
			for b.Loop() {
				runtime.GC()
				stop := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					var ms runtime.MemStats
					for {
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapAlloc)
						select {
						case <-stop:
							return
						case <-time.After(20 * time.Millisecond):
						}
					}
				}()
				res, err := backfill.Run(ctx, r, backfill.Options{Collections: []string{"users"}, ClientSide: true, Batch: 50})
				close(stop)
				<-done
				if err != nil || res.Collections[0].Failed[0].Count != int64(n) {
					b.Fatalf("%+v %v", res, err)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}
