package version_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

func TestDeltaOf(t *testing.T) {
	before := ext(t, `{"_id": 1, "name": "A B", "email": "e", "legacyId": null, "keep": [1, 2]}`)
	after := ext(t, `{"_id": 1, "keep": [1, 2], "name": {"first": "A", "last": "B"}, "contact": {"email": "e"}, "version": 3}`)
	d, err := version.DeltaOf(before, after)
	if err != nil {
		t.Fatal(err)
	}
	wantFilter := `{"_id":1,"name":{"$eq":"A B","$not":{"$type":"array"}},"contact":{"$exists":false},"version":{"$exists":false},"email":{"$eq":"e","$not":{"$type":"array"}},"legacyId":{"$type":"null","$not":{"$type":"array"}},"_mongomig_step":{"$exists":false}}`
	wantUpdate := `{"$set":{"name":{"first":"A","last":"B"},"contact":{"email":"e"},"version":3},"$unset":{"email":"","legacyId":""}}`
	if got := js(d.Filter); got != wantFilter {
		t.Errorf("filter\n got %s\nwant %s", got, wantFilter)
	}
	if got := js(d.Update); got != wantUpdate {
		t.Errorf("update\n got %s\nwant %s", got, wantUpdate)
	}
	if d, _ := version.DeltaOf(before, before); !d.Empty() {
		t.Errorf("no change gives %s", js(d.Update))
	}
	if _, err := version.DeltaOf(ext(t, `{"a": 1}`), ext(t, `{"a": 2}`)); err == nil {
		t.Error("a document without _id was accepted")
	}
}

// TestWriteBackInterleavings runs the write-back against the sandbox with
// a concurrent writer at each point of interest, deterministically (the
// sandbox does not make conditional updates atomic, so true concurrency is
// tested only against MongoDB, below).
func TestWriteBackInterleavings(t *testing.T) {
	ctx := context.Background()
	r := newRegistry(t)
	coll := sandboxtest.Database(t, "app").Collection("users")
	for _, tc := range []struct {
		name     string
		writer   bson.D // concurrent update between our read and our write
		wantWon  bool
		wantJSON string
	}{
		{"no concurrent writer", nil, true,
			`{"name":{"first":"Ada","last":"L"},"contact":{"email":"a@x"},"status":"active","version":3}`},
		{"writer changes a field the upgrade does not touch", bson.D{{Key: "$set", Value: bson.D{{Key: "visits", Value: 5}}}}, true,
			`{"name":{"first":"Ada","last":"L"},"visits":5,"contact":{"email":"a@x"},"status":"active","version":3}`},
		{"writer changes a field the upgrade changes", bson.D{{Key: "$set", Value: bson.D{{Key: "email", Value: "new@x"}}}}, false,
			`{"name":"Ada L","email":"new@x","legacyId":1}`},
		{"writer adds a field the upgrade adds", bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: "suspended"}}}}, false,
			`{"name":"Ada L","email":"a@x","legacyId":1,"status":"suspended"}`},
		{"another reader upgraded it first", bson.D{{Key: "$set", Value: bson.D{{Key: "version", Value: 3}}}}, false,
			`{"name":"Ada L","email":"a@x","legacyId":1,"version":3}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := bson.NewObjectID()
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "name", Value: "Ada L"}, {Key: "email", Value: "a@x"}, {Key: "legacyId", Value: 1}}); err != nil {
				t.Fatal(err)
			}
			var read bson.D
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&read); err != nil {
				t.Fatal(err)
			}
			up, changed, err := r.Upgrade("users", read)
			if err != nil || !changed {
				t.Fatalf("upgrade: %v %v", changed, err)
			}
			if tc.writer != nil {
				if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, tc.writer); err != nil {
					t.Fatal(err)
				}
			}
			won, err := r.WriteBack(ctx, coll, read, up)
			if err != nil || won != tc.wantWon {
				t.Fatalf("WriteBack = %v, %v; want won=%v", won, err, tc.wantWon)
			}
			var got bson.D
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if s := js(got[1:]); s != tc.wantJSON {
				t.Errorf("stored\n got %s\nwant %s", s, tc.wantJSON)
			}
		})
	}
}

// TestWriteBackConcurrentMongoDB races write-backs against writers that
// increment a counter on a real MongoDB: every increment survives, and
// exactly one write-back per document wins. The upgraders do what
// WriteBack's doc tells a caller: a lost write-back re-reads and retries.
// The chain's func step makes the guard cover every field as read, so an
// increment landing between a read and its write-back makes that
// write-back match nothing (without the retry, all four upgraders can lose
// the same document to the writers, and it stays at version 0).
func TestWriteBackConcurrentMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_writeback", "truly concurrent write-back needs MongoDB's atomic updates (the sandbox interleavings are TestWriteBackInterleavings)")
	ctx := context.Background()
	coll := db.Collection("users")
	r := newRegistry(t)
	const docs, upgraders, incs = 50, 4, 20
	for i := 0; i < docs; i++ {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "name", Value: "A B"}, {Key: "email", Value: "e"}, {Key: "n", Value: 0}}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	wins := make([]int, upgraders)
	for u := 0; u < upgraders; u++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < docs; i++ {
				for attempt := 0; ; attempt++ {
					if attempt == 10000 {
						t.Errorf("document %d: no write-back won in %d attempts", i, attempt)
						return
					}
					var read bson.D
					if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: i}}).Decode(&read); err != nil {
						t.Error(err)
						return
					}
					up, changed, err := r.Upgrade("users", read)
					if err != nil {
						t.Error(err)
						return
					}
					if !changed {
						break // upgraded by another upgrader
					}
					won, err := r.WriteBack(ctx, coll, read, up)
					if err != nil {
						t.Error(err)
						return
					}
					if won {
						wins[u]++
						break
					}
				}
			}
		}()
	}
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < incs; k++ {
				for i := 0; i < docs; i++ {
					if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: i}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, w := range wins {
		total += w
	}
	if total != docs {
		t.Errorf("%d write-backs won for %d documents; want exactly one each", total, docs)
	}
	cur, err := coll.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var all []bson.M
	if err := cur.All(ctx, &all); err != nil {
		t.Fatal(err)
	}
	for _, d := range all {
		if d["n"] != int32(2*incs) || d["version"] != int32(3) {
			t.Errorf("document %v: n=%v version=%v; want n=%d (no lost increment) and version 3", d["_id"], d["n"], d["version"], 2*incs)
		}
	}
}

// TestDeltaGuardsDollarDocuments: a field holding a document whose first
// name starts with '$' (allowed below the top level since MongoDB 5.0)
// is guarded with $eq: as a bare filter value
// {a: {$kind: 1}} MongoDB's query parser would read $kind as an operator
// (src/mongo/db/matcher/expression_parser.cpp, isExpressionDocument: an
// object whose first field starts with '$' is an operator expression).
func TestDeltaGuardsDollarDocuments(t *testing.T) {
	before := ext(t, `{"_id": 1, "a": {"$kind": 1}, "b": {"c": {"$x": 1}}}`)
	after := ext(t, `{"_id": 1, "a": {"$kind": 2}, "b": {"c": {"$x": 2}}}`)
	d, err := version.DeltaOf(before, after)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := js(d.Filter), `{"_id":1,"a":{"$eq":{"$kind":1},"$not":{"$type":"array"}},"b":{"$eq":{"c":{"$x":1}},"$not":{"$type":"array"}},"_mongomig_step":{"$exists":false}}`; got != want {
		t.Errorf("filter %s, want %s", got, want)
	}
}

// TestDeltaOfManyFields: past the 64 fields a delta's first pass
// remembers, fields are still set, unset and guarded as below them.
func TestDeltaOfManyFields(t *testing.T) {
	var before, after bson.D
	before = append(before, bson.E{Key: "_id", Value: int32(1)})
	after = append(after, bson.E{Key: "_id", Value: int32(1)})
	for i := 0; i < 70; i++ {
		k := fmt.Sprint("f", i)
		before = append(before, bson.E{Key: k, Value: int32(i)})
		switch i {
		case 3, 65: // unset
		case 2, 66:
			after = append(after, bson.E{Key: k, Value: "changed"})
		default:
			after = append(after, bson.E{Key: k, Value: int32(i)})
		}
	}
	after = append(after, bson.E{Key: "g", Value: true})
	d, err := version.DeltaOf(before, after)
	if err != nil {
		t.Fatal(err)
	}
	wantUpdate := `{"$set":{"f2":"changed","f66":"changed","g":true},"$unset":{"f3":"","f65":""}}`
	wantFilter := `{"_id":1,"f2":{"$eq":2,"$not":{"$type":"array"}},"f66":{"$eq":66,"$not":{"$type":"array"}},"g":{"$exists":false},` +
		`"f3":{"$eq":3,"$not":{"$type":"array"}},"f65":{"$eq":65,"$not":{"$type":"array"}},"_mongomig_step":{"$exists":false}}`
	if got := js(d.Update); got != wantUpdate {
		t.Errorf("update\n got %s\nwant %s", got, wantUpdate)
	}
	if got := js(d.Filter); got != wantFilter {
		t.Errorf("filter\n got %s\nwant %s", got, wantFilter)
	}
}
