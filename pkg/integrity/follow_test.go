package integrity_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/integrity"
)

// event builds a change event in the shape MongoDB documents for it
// (the manual's "Change Events" reference; the field names of
// src/mongo/db/pipeline/document_source_change_stream.h): _id (the
// resume token, {_data: <hex string>}), operationType, clusterTime, ns
// {db, coll}, documentKey {_id}, then the fields of its kind
// (fullDocument, fullDocumentBeforeChange, updateDescription). It is the
// documented shape, NOT a server's output: neither test server has change
// streams, so no event here ever came from one.
func event(db *mongo.Database, n int, op, coll string, id any, extra ...bson.E) bson.Raw {
	ev := bson.D{
		{Key: "_id", Value: bson.D{{Key: "_data", Value: fmt.Sprintf("8263A1B2C3%08X2B022C0100296E5A1004", n)}}},
		{Key: "operationType", Value: op},
		{Key: "clusterTime", Value: bson.Timestamp{T: 1700000000, I: uint32(n)}},
		{Key: "ns", Value: bson.D{{Key: "db", Value: db.Name()}, {Key: "coll", Value: coll}}},
	}
	if id != nil {
		ev = append(ev, bson.E{Key: "documentKey", Value: bson.D{{Key: "_id", Value: id}}})
	}
	raw, err := bson.Marshal(append(ev, extra...))
	if err != nil {
		panic(err)
	}
	return raw
}

func updated(fields bson.D, removed ...string) bson.E {
	if removed == nil {
		removed = []string{}
	}
	return bson.E{Key: "updateDescription", Value: bson.D{{Key: "updatedFields", Value: fields}, {Key: "removedFields", Value: removed}, {Key: "truncatedArrays", Value: bson.A{}}}}
}

func full(doc bson.D) bson.E   { return bson.E{Key: "fullDocument", Value: doc} }
func before(doc bson.D) bson.E { return bson.E{Key: "fullDocumentBeforeChange", Value: doc} }

func fixLines(a *integrity.Applied) string {
	var out []string
	for _, f := range a.Fixes {
		out = append(out, fmt.Sprintf("%s %s %s->%s %s", f.ID, f.Path, f.Wrong, f.Right, f.Outcome))
	}
	return strings.Join(out, "\n")
}

func apply(t *testing.T, c *integrity.Checker, ev bson.Raw) *integrity.Applied {
	t.Helper()
	a, err := c.ApplyChange(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func intOf(t *testing.T, db *mongo.Database, coll string, id any, field string) int64 {
	t.Helper()
	raw, err := db.Collection(coll).FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	v, ok := raw.Lookup(field).AsInt64OK()
	if !ok {
		t.Fatalf("%s _id %v: %s is %s", coll, id, field, raw.Lookup(field))
	}
	return v
}

// followChildren: a comment inserted on post b without the application's
// $inc (b stays drifted at 3 with 2 comments) is an insert event; applying
// it recomputes b alone (post a, drifted on purpose, is left for the
// scheduled repair), guarded on the 3 it read: another writer adds a
// comment and $inc's b at the write, the guard misses, b is re-checked
// and set to the 3 comments it has, the concurrent increment counted, not
// erased. A comment deleted without its pre-image rescans the post rules
// whole; with it (fullDocumentBeforeChange), only its post.
func followChildren(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	school(t, db)
	set(t, db, "posts", "a", "commentCount", int32(7)) // drifted: 2 comments
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	c104 := bson.D{{Key: "_id", Value: 104}, {Key: "postId", Value: "b"}, {Key: "score", Value: int32(2)}}
	insert(t, db, "comments", c104)
	raced := false
	testhook.Set(c, func(point string, _ int64, attempt int) {
		if point != "integrity.write posts" || raced {
			return
		}
		raced = true
		insert(t, db, "comments", bson.D{{Key: "_id", Value: 105}, {Key: "postId", Value: "b"}, {Key: "score", Value: int32(1)}})
		if _, err := db.Collection("posts").UpdateOne(ctx, bson.D{{Key: "_id", Value: "b"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "commentCount", Value: 1}}}}); err != nil {
			t.Error(err)
		}
	})
	a := apply(t, c, event(db, 1, "insert", "comments", 104, full(c104)))
	testhook.Set(c, nil)
	if !raced {
		t.Fatal("the writer never ran: no fix was written")
	}
	if got := intOf(t, db, "posts", "b", "commentCount"); got != 3 {
		t.Errorf("post b commentCount %d, want 3 (its comments 102, 104 and the concurrent 105); fixes:\n%s", got, fixLines(a))
	}
	if got := intOf(t, db, "posts", "a", "commentCount"); got != 7 {
		t.Errorf("post a commentCount %d: the event named post b only", got)
	}
	if !strings.Contains(fixLines(a), `"b" commentCount 4->3 fixed`) || len(a.Rescanned) != 0 {
		t.Errorf("fixes:\n%s\nrescanned %v: want b re-checked after the concurrent $inc (4) and set to 3, nothing rescanned", fixLines(a), a.Rescanned)
	}

	// An update of a field no post rule reads: nothing to do.
	a = apply(t, c, event(db, 2, "update", "comments", 104, updated(bson.D{{Key: "text", Value: "hi"}}), full(append(c104, bson.E{Key: "text", Value: "hi"}))))
	if len(a.Fixes) != 0 || len(a.Rescanned) != 0 {
		t.Errorf("an update of text: fixes %s, rescanned %v, want none", fixLines(a), a.Rescanned)
	}

	// Deleted with its pre-image: post b alone.
	if _, err := db.Collection("comments").DeleteOne(ctx, bson.D{{Key: "_id", Value: 105}}); err != nil {
		t.Fatal(err)
	}
	a = apply(t, c, event(db, 3, "delete", "comments", 105, before(bson.D{{Key: "_id", Value: 105}, {Key: "postId", Value: "b"}, {Key: "score", Value: int32(1)}})))
	if got := intOf(t, db, "posts", "b", "commentCount"); got != 2 || len(a.Rescanned) != 0 {
		t.Errorf("after the delete of 105 with its pre-image: b commentCount %d, rescanned %v; want 2, none", got, a.Rescanned)
	}
	if got := intOf(t, db, "posts", "a", "commentCount"); got != 7 {
		t.Errorf("post a commentCount %d: the event named post b only", got)
	}

	// Deleted without it: which post lost a comment is unknown; the post
	// rules are checked whole (and post a is fixed too).
	if _, err := db.Collection("comments").DeleteOne(ctx, bson.D{{Key: "_id", Value: 104}}); err != nil {
		t.Fatal(err)
	}
	a = apply(t, c, event(db, 4, "delete", "comments", 104))
	if len(a.Rescanned) != 2 {
		t.Errorf("rescanned %v, want the two post rules", a.Rescanned)
	}
	if b, pa := intOf(t, db, "posts", "b", "commentCount"), intOf(t, db, "posts", "a", "commentCount"); b != 1 || pa != 2 {
		t.Errorf("after the rescan: b %d, a %d; want 1 and 2", b, pa)
	}
}

func TestFollowChildren(t *testing.T) { followChildren(t, sandboxtest.Database(t, "integrity")) }

func TestFollowChildrenMongoDB(t *testing.T) {
	followChildren(t, sandboxtest.MongoDB(t, "integrity_follow_children", "TestFollowChildren covers the sandbox"))
}

// followSources: a class's update that names its credits propagates them
// to the mirror copies (student 2, left behind); one naming another field
// propagates nothing. A concurrent edit of another field of the student
// (at the point integrity.propagate) survives: the propagation sets the
// copied field alone. A deleted class leaves its references to the
// reference rule (report: nothing written), and a deleted post has the
// comments naming it unset (onDangling unset), not comment 103, which
// names another missing post.
func followSources(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	school(t, db)
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	math := bson.D{{Key: "_id", Value: "math"}, {Key: "name", Value: "Math"}, {Key: "credits", Value: int32(4)}, {Key: "room", Value: "B2"}}
	a := apply(t, c, event(db, 1, "update", "classes", "math", updated(bson.D{{Key: "room", Value: "B2"}}), full(math)))
	if len(a.Propagated) != 0 || len(a.Fixes) != 0 {
		t.Errorf("an update of room: propagated %+v, fixes %s; want nothing", a.Propagated, fixLines(a))
	}
	testhook.Set(c, func(point string, _ int64, batch int) {
		if point == "integrity.propagate students" && batch == 0 {
			set(t, db, "students", 2, "nick", "Bo")
		}
	})
	a = apply(t, c, event(db, 2, "update", "classes", "math", updated(bson.D{{Key: "credits", Value: int32(4)}}), full(math)))
	testhook.Set(c, nil)
	if len(a.Propagated) != 1 || a.Propagated[0].Modified != 1 {
		t.Errorf("an update of credits: propagated %+v, want student 2's credits written", a.Propagated)
	}
	raw, err := db.Collection("students").FindOne(ctx, bson.D{{Key: "_id", Value: 2}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if raw.Lookup("classes", "1", "credits").AsInt64() != 4 || raw.Lookup("nick").StringValue() != "Bo" {
		t.Errorf("student 2 = %s: want math's credits 4 and the concurrent nick kept", raw)
	}

	if _, err := db.Collection("posts").DeleteOne(ctx, bson.D{{Key: "_id", Value: "a"}}); err != nil {
		t.Fatal(err)
	}
	a = apply(t, c, event(db, 3, "delete", "posts", "a"))
	if got, want := fixLines(a), "100 postId\"a\"->(reference removed) fixed\n101 postId\"a\"->(reference removed) fixed"; strings.ReplaceAll(got, " ", "") != strings.ReplaceAll(want, " ", "") {
		t.Errorf("a deleted post's comments:\n%s\nwant:\n%s", got, want)
	}
	if n, err := db.Collection("comments").CountDocuments(ctx, bson.D{{Key: "postId", Value: "deleted"}}); err != nil || n != 1 {
		t.Errorf("comment 103 (another missing post) changed: %d left, %v", n, err)
	}
	if _, err := db.Collection("classes").DeleteOne(ctx, bson.D{{Key: "_id", Value: "art"}}); err != nil {
		t.Fatal(err)
	}
	a = apply(t, c, event(db, 4, "delete", "classes", "art"))
	if len(a.Fixes) != 2 {
		t.Errorf("a deleted class: fixes\n%s\nwant students 1 and 2's references reported", fixLines(a))
	}
	for _, f := range a.Fixes {
		if f.Outcome != integrity.OutcomeReported {
			t.Errorf("a deleted class: %+v, want only reported references", f)
		}
	}
}

func TestFollowSources(t *testing.T) { followSources(t, sandboxtest.Database(t, "integrity")) }

func TestFollowSourcesMongoDB(t *testing.T) {
	followSources(t, sandboxtest.MongoDB(t, "integrity_follow_sources", "TestFollowSources covers the sandbox"))
}

// followEventShapes: events of the shapes MongoDB's versions differ
// in (no truncatedArrays before 5.0, truncatedArrays as {field, newSize})
// are read, and an event of one document without its documentKey is an
// error, not a guess. Built by hand, as the other events here.
func followEventShapes(t *testing.T, db *mongo.Database) {
	school(t, db)
	c, err := integrity.New(db, rules(t), integrity.Options{})
	if err != nil {
		t.Fatal(err)
	}
	noTruncated := bson.E{Key: "updateDescription", Value: bson.D{{Key: "updatedFields", Value: bson.D{{Key: "score", Value: int32(9)}}}, {Key: "removedFields", Value: bson.A{}}}}
	a := apply(t, c, event(db, 1, "update", "comments", 101, noTruncated, full(bson.D{{Key: "_id", Value: 101}, {Key: "postId", Value: "a"}, {Key: "score", Value: int32(9)}})))
	if len(a.Rescanned) != 0 {
		t.Errorf("an update of score: rescanned %v", a.Rescanned)
	}
	truncated := bson.E{Key: "updateDescription", Value: bson.D{{Key: "updatedFields", Value: bson.D{}}, {Key: "removedFields", Value: bson.A{}},
		{Key: "truncatedArrays", Value: bson.A{bson.D{{Key: "field", Value: "postId"}, {Key: "newSize", Value: int32(0)}}}}}}
	a = apply(t, c, event(db, 2, "update", "comments", 101, truncated, full(bson.D{{Key: "_id", Value: 101}, {Key: "postId", Value: bson.A{}}})))
	if len(a.Rescanned) != 2 {
		t.Errorf("a truncated postId without a pre-image: rescanned %v, want the two post rules", a.Rescanned)
	}
	if _, err := c.ApplyChange(context.Background(), event(db, 3, "delete", "comments", nil)); err == nil || !strings.Contains(err.Error(), "without documentKey._id") {
		t.Errorf("a delete without documentKey: %v", err)
	}
}

// followWideEvents: a drop of a watched collection rescans every rule
// that reads it (the comments dropped: both post rules, every post
// recomputed), and a rename names the rules of both its collections; the
// rules that read neither are not rescanned. Built by hand, as the other
// events here.
func followWideEvents(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	school(t, db)
	c, err := integrity.New(db, rules(t), integrity.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Collection("comments").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	a := apply(t, c, event(db, 1, "drop", "comments", nil))
	if len(a.Rescanned) != 2 || !strings.HasPrefix(a.Rescanned[0], "posts.") || !strings.HasPrefix(a.Rescanned[1], "posts.") {
		t.Errorf("a drop of comments rescanned %v, want the two post rules", a.Rescanned)
	}
	if pa, pb := intOf(t, db, "posts", "a", "commentCount"), intOf(t, db, "posts", "b", "commentCount"); pa != 0 || pb != 0 {
		t.Errorf("after the drop of comments: a %d, b %d, want 0 and 0", pa, pb)
	}
	a = apply(t, c, event(db, 2, "rename", "scratch", nil, bson.E{Key: "to", Value: bson.D{{Key: "db", Value: db.Name()}, {Key: "coll", Value: "classes"}}}))
	if len(a.Rescanned) != 3 || !strings.HasPrefix(a.Rescanned[0], "students.") {
		t.Errorf("a rename onto classes rescanned %v, want the three student rules that read classes (the reference, the two mirrored fields)", a.Rescanned)
	}
}

func TestFollowEventShapes(t *testing.T) { followEventShapes(t, sandboxtest.Database(t, "integrity")) }

func TestFollowEventShapesMongoDB(t *testing.T) {
	followEventShapes(t, sandboxtest.MongoDB(t, "integrity_follow_shapes", "TestFollowEventShapes covers the sandbox"))
}

func TestFollowWideEvents(t *testing.T) { followWideEvents(t, sandboxtest.Database(t, "integrity")) }

func TestFollowWideEventsMongoDB(t *testing.T) {
	followWideEvents(t, sandboxtest.MongoDB(t, "integrity_follow_wide", "TestFollowWideEvents covers the sandbox"))
}
