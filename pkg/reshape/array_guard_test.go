package reshape_test

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/reshape"
)

// The parent's update of an extract is guarded on the array exactly as
// read: a writer who, after the read, wrapped the array in a new one
// ([{t: a}, {t: b}] became [[{t: a}, {t: b}], {t: c}]) or put [] or null
// into an empty one ([] became [[]] or [null]) makes it match nothing, so
// the array is read again and what the writer stored is extracted too,
// never erased. Plain equality ({comments: [...]}, {$in: [[], null]})
// matched those arrays (src/mongo/db/matcher/path.cpp,
// BSONElementIterator: a leaf array yields its elements, then itself),
// the sandbox's [null] as well. FerretDB v1 stores no nested arrays: there
// only the [null] writer runs.
func TestExtractArrayGuardIsExactMongoDB(t *testing.T) {
	servers(t, "reshape_extract_arrays", func(t *testing.T, db *mongo.Database) {
		ctx := context.Background()
		posts := db.Collection("posts")
		ab := bson.A{bson.D{{Key: "t", Value: "a"}}, bson.D{{Key: "t", Value: "b"}}}
		read := map[int32]bson.A{1: ab, 2: {}, 3: {}}
		writer := map[int32]bson.A{1: {ab, bson.D{{Key: "t", Value: "c"}}}, 2: {nil}, 3: {bson.A{}}}
		// The element of each writer's array that only it holds.
		only := map[int32]any{1: ab, 2: nil, 3: bson.A{}}
		for id, c := range read {
			if _, err := posts.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "comments", Value: c}}); err != nil {
				t.Fatal(err)
			}
		}
		wrote := map[int32]bool{}
		hook := func(point string, _ int64, _ int) {
			if point != "reshape.children" || len(wrote) > 0 {
				return
			}
			// After the batch's read, before the first parent's update.
			for id, c := range writer {
				_, err := posts.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "comments", Value: c}}}})
				if err != nil && strings.Contains(err.Error(), "nested arrays are not supported") {
					wrote[id] = false
					continue
				}
				if err != nil {
					t.Error(err)
				}
				wrote[id] = true
			}
		}
		if _, err := run(t, db, migrationN(t, 3, blogFile), reshape.Options{Hook: hook}); err != nil {
			t.Fatal(err)
		}
		for id, ok := range wrote {
			if !ok {
				t.Logf("post %d: FerretDB v1 stores no nested arrays, no writer could make this change", id)
				continue
			}
			f := bson.D{{Key: "postId", Value: id}, {Key: "value", Value: bson.D{{Key: "$eq", Value: only[id]}, {Key: "$exists", Value: true}}}}
			n, err := db.Collection("comments").CountDocuments(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var p bson.D
			_ = posts.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&p)
			if n == 0 {
				t.Errorf("post %d: the writer's %v was erased, not extracted (post now %v)", id, writer[id], p)
			}
		}
	})
}

// An embed into an array of documents is guarded on the whole array as
// read, exactly: a writer who wrapped it in a new array after the read
// ([{_id: c1}, {_id: c2}] became [[{_id: c1}, {_id: c2}], {_id: c2}],
// which {$eq: [...], $size: 2} still matched) makes the write match
// nothing, and the copy is written into the array the writer left (its
// documents; the nested array is no base), which is kept. FerretDB v1
// stores no nested arrays: there the unchanged array is embedded.
func TestEmbedArrayGuardIsExactMongoDB(t *testing.T) {
	servers(t, "reshape_embed_arrays", func(t *testing.T, db *mongo.Database) {
		ctx := context.Background()
		for _, c := range []string{"c1", "c2"} {
			if _, err := db.Collection("classes").InsertOne(ctx, bson.D{{Key: "_id", Value: c}, {Key: "name", Value: "class " + c}}); err != nil {
				t.Fatal(err)
			}
		}
		students := db.Collection("students")
		read := bson.A{bson.D{{Key: "_id", Value: "c1"}}, bson.D{{Key: "_id", Value: "c2"}}}
		if _, err := students.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(1)}, {Key: "classes", Value: read}}); err != nil {
			t.Fatal(err)
		}
		writer := bson.A{read, bson.D{{Key: "_id", Value: "c2"}}}
		nested, wrote := true, false
		hook := func(point string, _ int64, _ int) {
			if point != "reshape.embed" || wrote {
				return
			}
			wrote = true
			_, err := students.UpdateOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}, bson.D{{Key: "$set", Value: bson.D{{Key: "classes", Value: writer}}}})
			if err != nil && strings.Contains(err.Error(), "nested arrays are not supported") {
				nested = false
				return
			}
			if err != nil {
				t.Error(err)
			}
		}
		file := "run:\n  - embed: {into: students, via: classes._id, from: classes, mode: mirror, fields: {name: name}}\n"
		if _, err := run(t, db, migrationN(t, 3, file), reshape.Options{Hook: hook}); err != nil {
			t.Fatal(err)
		}
		named := func(id string) bson.D {
			return bson.D{{Key: "_id", Value: id}, {Key: "name", Value: "class " + id}}
		}
		want := bson.A{named("c1"), named("c2")}
		if nested {
			want = bson.A{read, named("c2")}
		} else {
			t.Log("FerretDB v1 stores no nested arrays: no writer could make this change")
		}
		var got bson.D
		if err := students.FindOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}).Decode(&got); err != nil {
			t.Fatal(err)
		}
		w, _ := bson.MarshalExtJSON(bson.D{{Key: "_id", Value: int32(1)}, {Key: "classes", Value: want}}, true, false)
		g, _ := bson.MarshalExtJSON(got, true, false)
		if string(w) != string(g) {
			t.Errorf("stored %s, want %s", g, w)
		}
	})
}
