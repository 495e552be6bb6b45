package integrity_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/integrity"
)

// interleave runs repair with application writers acting between its
// check and each of its first writes (the point "integrity.write"): one
// adds a comment to post b and $inc's its commentCount, the way an
// application keeps the count; an old release replaces student 2 whole,
// changing its art class's name. Neither write is lost: the guards miss,
// the documents are re-checked, and the fixes are made against what the
// writers left.
func interleave(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	school(t, db)
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	replaced, incremented := false, false
	testhook.Set(c, func(point string, _ int64, attempt int) {
		var err error
		switch {
		case attempt > 0:
			return
		case point == "integrity.write students" && !replaced:
			replaced = true
			class := func(id, name string, credits int32) bson.D {
				return bson.D{{Key: "_id", Value: id}, {Key: "name", Value: name}, {Key: "credits", Value: credits}}
			}
			_, err = db.Collection("students").ReplaceOne(ctx, bson.D{{Key: "_id", Value: 2}},
				bson.D{{Key: "classes", Value: bson.A{class("art", "Art history", 2), class("math", "Math", 3)}}, {Key: "nick", Value: "Bo"}})
		case point == "integrity.write posts" && !incremented:
			incremented = true
			if _, err = db.Collection("comments").InsertOne(ctx, bson.D{{Key: "_id", Value: 104}, {Key: "postId", Value: "b"}, {Key: "score", Value: int32(2)}}); err == nil {
				_, err = db.Collection("posts").UpdateOne(ctx, bson.D{{Key: "_id", Value: "b"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "commentCount", Value: 1}}}})
			}
		}
		if err != nil {
			t.Error(err)
		}
	})
	defer testhook.Set(c, nil)
	if _, err := c.Repair(ctx, false); err != nil {
		t.Fatal(err)
	}
	var post struct{ CommentCount int64 }
	if err := db.Collection("posts").FindOne(ctx, bson.D{{Key: "_id", Value: "b"}}).Decode(&post); err != nil || post.CommentCount != 2 {
		t.Errorf("post b commentCount %d (%v), want 2: its two comments", post.CommentCount, err)
	}
	var st struct {
		Nick    string
		Classes []struct {
			Name    string
			Credits int32
		}
	}
	if err := db.Collection("students").FindOne(ctx, bson.D{{Key: "_id", Value: 2}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Nick != "Bo" || len(st.Classes) != 2 || st.Classes[1].Credits != 4 {
		t.Errorf("student 2 = %+v: want the replacement's nick kept and math's credits repaired", st)
	}
	if st.Classes[0].Name != "Art" {
		// The mirror of the name puts it back in line with classes: that is
		// the rule, not a lost write (the class is named Art).
		t.Errorf("student 2's art class is named %q, want the mirror's Art", st.Classes[0].Name)
	}
	if !replaced || !incremented {
		t.Errorf("replaced %v, incremented %v: want both writers run", replaced, incremented)
	}
}

func TestRepairInterleavings(t *testing.T) { interleave(t, sandboxtest.Database(t, "integrity")) }

func TestRepairInterleavingsMongoDB(t *testing.T) {
	interleave(t, sandboxtest.MongoDB(t, "integrity_interleave", "TestRepairInterleavings covers the sandbox"))
}
