package versioned_test

import (
	"context"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
	"github.com/mongomig/mongomig/pkg/version/versioned"
)

// Benchmarks come in pairs, X/mongomig and X/baseline, measured in the same
// run; `make bench` prints their ratio (docs/performance.md, "Lazy reads
// through versioned.Collection").

// benchUser is the ten-field document of pkg/version's benchmarks at
// version 1, after `rename: {email: contact.email}`.
type benchUser struct {
	ID      bson.ObjectID `bson:"_id"`
	Name    string        `bson:"name"`
	Contact struct {
		Email string `bson:"email"`
	} `bson:"contact"`
	LegacyID  int32         `bson:"legacyId"`
	CreatedAt bson.DateTime `bson:"createdAt"`
	Tags      []string      `bson:"tags"`
	Address   struct {
		City string `bson:"city"`
		Zip  string `bson:"zip"`
	} `bson:"address"`
	Score  float64 `bson:"score"`
	Active bool    `bson:"active"`
	Visits int64   `bson:"visits"`
}

// benchUserV0 is the same document at version 0, for the hand-written
// upgrade of decoded structs.
type benchUserV0 struct {
	ID        bson.ObjectID `bson:"_id"`
	Name      string        `bson:"name"`
	Email     string        `bson:"email"`
	LegacyID  int32         `bson:"legacyId"`
	CreatedAt bson.DateTime `bson:"createdAt"`
	Tags      []string      `bson:"tags"`
	Address   struct {
		City string `bson:"city"`
		Zip  string `bson:"zip"`
	} `bson:"address"`
	Score  float64 `bson:"score"`
	Active bool    `bson:"active"`
	Visits int64   `bson:"visits"`
}

var oneStep = fstest.MapFS{"0001_a.yaml": {Data: []byte(`collections:
  users:
    upgrade:
      - rename: {email: contact.email}
`)}}

// benchDoc is the version 0 document; current moves email under contact
// and stamps version 1.
func benchDoc(current bool) bson.Raw {
	d := bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: "Ada Lovelace"}}
	if current {
		d = append(d, bson.E{Key: "contact", Value: bson.D{{Key: "email", Value: "ada@example.com"}}})
	} else {
		d = append(d, bson.E{Key: "email", Value: "ada@example.com"})
	}
	d = append(d, bson.D{
		{Key: "legacyId", Value: int32(17)},
		{Key: "createdAt", Value: bson.DateTime(1700000000000)},
		{Key: "tags", Value: bson.A{"a", "b", "c"}},
		{Key: "address", Value: bson.D{{Key: "city", Value: "London"}, {Key: "zip", Value: "N1"}}},
		{Key: "score", Value: 4.5},
		{Key: "active", Value: true},
		{Key: "visits", Value: int64(1234)},
	}...)
	if current {
		d = append(d, bson.E{Key: "version", Value: int32(1)})
	}
	raw, err := bson.Marshal(d)
	if err != nil {
		panic(err)
	}
	return raw
}

// offline is a collection of a client that never connects: Decode with
// the Never policy sends nothing.
func offline(b *testing.B, opts ...versioned.Option) *versioned.Collection {
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://127.0.0.1:1"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	reg, err := version.New(oneStep)
	if err != nil {
		b.Fatal(err)
	}
	return versioned.New(client.Database("app").Collection("users"), reg, opts...)
}

var userSink benchUser

// pair times mongomig and baseline as X/mongomig and X/baseline, after
// running both untimed: the first sub-benchmark of a process otherwise
// pays the warm-up (about 0.1x of a struct decode, measured by swapping
// the pair's order).
func pair(b *testing.B, mongomig, baseline func() error) {
	for range 20000 {
		if mongomig() != nil || baseline() != nil {
			b.Fatal(mongomig(), baseline())
		}
	}
	for _, form := range []struct {
		name string
		fn   func() error
	}{{"mongomig", mongomig}, {"baseline", baseline}} {
		b.Run(form.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := form.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVersionedCurrent: a current document decoded into a struct
// through the wrapper vs bson.Unmarshal of the same bytes.
func BenchmarkVersionedCurrent(b *testing.B) {
	users := offline(b)
	raw := benchDoc(true)
	ctx := context.Background()
	wrapper := func() error { return users.Decode(ctx, raw, &userSink) }
	driver := func() error { return bson.Unmarshal(raw, &userSink) }
	pair(b, wrapper, driver)
}

// handUpgrade is the one-step upgrade written by hand on bson.D, as an
// application without mongomig would: email moves under contact (where
// $rename puts a new field: in name order, here after address), version 1.
func handUpgrade(d bson.D) bson.D {
	out := make(bson.D, 0, len(d)+1)
	var email any
	for _, e := range d {
		if e.Key == "email" {
			email = e.Value
			continue
		}
		out = append(out, e)
	}
	out = append(out, bson.E{Key: "contact", Value: bson.D{{Key: "email", Value: email}}})
	return append(out, bson.E{Key: "version", Value: int32(1)})
}

// BenchmarkVersionedOneStep: a version 0 document read into today's struct
// through the wrapper vs the same done by hand as lazy code without
// mongomig does it: decode to bson.D, the hand-written upgrade, encode,
// decode into the struct.
func BenchmarkVersionedOneStep(b *testing.B) {
	users := offline(b)
	raw := benchDoc(false)
	ctx := context.Background()
	wrapper := func() error { return users.Decode(ctx, raw, &userSink) }
	byHand := func() error {
		var d bson.D
		if err := bson.Unmarshal(raw, &d); err != nil {
			return err
		}
		up, err := bson.Marshal(handUpgrade(d))
		if err != nil {
			return err
		}
		return bson.Unmarshal(up, &userSink)
	}
	pair(b, wrapper, byHand)
}

// BenchmarkVersionedOneStepStructs: the same read vs the fastest
// hand-written form, which keeps a struct per old version: decode into the
// version 0 struct and convert it.
func BenchmarkVersionedOneStepStructs(b *testing.B) {
	users := offline(b)
	raw := benchDoc(false)
	ctx := context.Background()
	wrapper := func() error { return users.Decode(ctx, raw, &userSink) }
	byHand := func() error {
		var old benchUserV0
		if err := bson.Unmarshal(raw, &old); err != nil {
			return err
		}
		u := benchUser{ID: old.ID, Name: old.Name, LegacyID: old.LegacyID, CreatedAt: old.CreatedAt,
			Tags: old.Tags, Address: old.Address, Score: old.Score, Active: old.Active, Visits: old.Visits}
		u.Contact.Email = old.Email
		userSink = u
		return nil
	}
	pair(b, wrapper, byHand)
}

// BenchmarkVersionedDeferred: reads of version 0 documents with the
// Deferred policy (batches of 50, the write-backs sent to the embedded
// server by the queue's goroutine) vs the same reads writing nothing back.
// It reports bulk writes and dropped write-backs per read and fails if a
// bulk write carried fewer than 50 write-backs but the last and the three
// of the start (10, 20, 40: the size grows while the server answers).
func BenchmarkVersionedDeferred(b *testing.B) {
	ctx := context.Background()
	srv := sandboxtest.Start(b)
	coll := sandboxtest.Connect(b, srv.URI()).Database("app").Collection("users")
	reg, err := version.New(oneStep)
	if err != nil {
		b.Fatal(err)
	}
	docs := make([]bson.Raw, 200)
	for i := range docs {
		docs[i] = benchDoc(false)
		if _, err := coll.InsertOne(ctx, docs[i]); err != nil {
			b.Fatal(err)
		}
	}
	const batch = 50
	b.Run("mongomig", func(b *testing.B) {
		users := versioned.New(coll, reg, versioned.WithDeferred(versioned.DeferredOptions{Queue: 200, Batch: batch, Interval: -1}))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := users.Decode(ctx, docs[i%len(docs)], &userSink); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.StopTimer()
		if err := users.Close(ctx); err != nil {
			b.Fatal(err)
		}
		s := users.Stats()
		// The size starts at 10 and doubles: 10, 20, 40, then batches of 50.
		if rest := max(s.Queued-70, 0); s.Bulks > 3+(rest+batch-1)/batch {
			b.Fatalf("%d bulk writes for %d queued write-backs in batches of 10, 20, 40, then %d", s.Bulks, s.Queued, batch)
		}
		b.ReportMetric(float64(s.Bulks)/float64(i), "bulks/read")
		b.ReportMetric(float64(s.Dropped)/float64(i), "dropped/read")
	})
	b.Run("baseline", func(b *testing.B) {
		users := versioned.New(coll, reg)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := users.Decode(ctx, docs[i%len(docs)], &userSink); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
