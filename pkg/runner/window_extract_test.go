package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/release"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// extractWindowFS: 0001's posts schema accepts embedded comments; 0002
// moves them into comments and declares a posts schema that refuses a
// non-empty comments array (maxItems: 0, which MongoDB and the second
// server both enforce).
func extractWindowFS() fstest.MapFS {
	return fstest.MapFS{
		"0001_posts.yaml": {Data: []byte(`collections:
  posts:
    validator:
      $jsonSchema: {bsonType: object, required: [title], properties: {title: {bsonType: string}, comments: {bsonType: array}}}
`)},
		"0002_comments.yaml": {Data: []byte(`collections:
  posts:
    validator:
      $jsonSchema: {bsonType: object, required: [title], properties: {title: {bsonType: string}, comments: {bsonType: array, maxItems: 0}, commentCount: {bsonType: [int, long]}}}
  comments:
    indexes:
      create:
        - {keys: {postId: 1}}
run:
  - extract:
      from: posts
      array: comments
      to: comments
      ref: postId
      keep: {count: commentCount}
`)},
	}
}

// extractSchemas are 0001's and 0002's posts validators as the files
// declare them.
func extractSchemas(t *testing.T) (s1, s2 bson.D) {
	t.Helper()
	ms, err := migration.Load(extractWindowFS())
	if err != nil {
		t.Fatal(err)
	}
	return ms[0].Collection("posts").Validator, ms[1].Collection("posts").Validator
}

func insertPosts(t *testing.T, db *mongo.Database) {
	t.Helper()
	_, err := db.Collection("posts").InsertMany(context.Background(), []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "title", Value: "Hello"}, {Key: "comments", Value: bson.A{bson.D{{Key: "by", Value: "ada"}}, bson.D{{Key: "by", Value: "bob"}}}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "title", Value: "Again"}, {Key: "comments", Value: bson.A{bson.D{{Key: "by", Value: "cy"}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// postsValidators are the validators of the collMods sent for posts.
func postsValidators(rec *cmdlog.Recorder) []bson.Raw {
	var out []bson.Raw
	for _, c := range rec.Named("collMod") {
		if c.Lookup("collMod").StringValue() == "posts" {
			if v, ok := c.Lookup("validator").DocumentOK(); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

func sameDoc(t *testing.T, got bson.Raw, want bson.D) bool {
	t.Helper()
	w, err := bson.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	return string(got) == string(w)
}

// pushComment is an old release appending to the embedded array.
func pushComment(ctx context.Context, db *mongo.Database, id int, by string) error {
	_, err := db.Collection("posts").UpdateOne(ctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$push", Value: bson.D{{Key: "comments", Value: bson.D{{Key: "by", Value: by}}}}}})
	return err
}

// TestExtractWindowCommands pins what up sends for the parent of an
// extract (internal/window, invariants 5 and 6): 0002's collMod is
// {$or: [S(0002), S(0001)]}, sent before the move; once the move is done
// and no post holds comments, the same up sends S(0002) alone, and
// status shows no extract window.
func TestExtractWindowCommands(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	insertPosts(t, db)
	s1, s2 := extractSchemas(t)
	r := newRunner(t, db, extractWindowFS())
	if _, err := r.UpTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	res, err := r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vs := postsValidators(rec)
	if len(vs) != 2 || !sameDoc(t, vs[0], bson.D{{Key: "$or", Value: bson.A{s2, s1}}}) || !sameDoc(t, vs[1], s2) {
		t.Fatalf("posts validators sent = %v; want the window {$or: [S2, S1]}, then S2", vs)
	}
	if res.Tightened == nil || len(res.Tightened.Held) != 0 {
		t.Errorf("up's tightening = %+v; want the extract window closed, none held", res.Tightened)
	}
	st, err := r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := collStatus(st, "posts"); len(p.ExtractWindows) != 0 {
		t.Errorf("posts extract windows after close = %+v", p.ExtractWindows)
	}
	rec.Reset()
	if again, err := r.Up(ctx); err != nil || again.Tightened != nil || len(postsValidators(rec)) != 0 {
		t.Errorf("second up: %+v %v, sent %v; want nothing", again, err, postsValidators(rec))
	}
}

// TestExtractWindowHeldWhileParentHoldsArray: a comment an old release
// appends after the move's last pass stays embedded; the proof finds it,
// so the window stays open (up says why, status shows it) on every up
// until no post holds comments; then up closes it. Down reopens it.
func TestExtractWindowHeldWhileParentHoldsArray(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	insertPosts(t, db)
	s1, s2 := extractSchemas(t)
	r := newRunner(t, db, extractWindowFS())
	runner.SetHook(r, func(point string, v int64, _ int) {
		if point == "recorded" && v == 2 {
			if err := pushComment(ctx, db, 2, "late"); err != nil {
				t.Error(err)
			}
		}
	})
	res, err := r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkHeld(t, res, "posts _id 2 still holds comments")
	rec.Reset()
	runner.SetHook(r, nil)
	res, err = r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkHeld(t, res, "posts _id 2 still holds comments")
	if vs := postsValidators(rec); len(vs) != 0 {
		t.Errorf("an up with the window held sent %v", vs)
	}
	st, err := r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := collStatus(st, "posts"); len(p.ExtractWindows) != 1 || p.ExtractWindows[0] != (runner.ExtractWindow{Migration: 2, Run: 1, Array: "comments"}) {
		t.Errorf("posts extract windows = %+v", p.ExtractWindows)
	}
	p, err := r.Plan(ctx, runner.Latest)
	if err != nil || len(p.HeldWindows) != 1 || len(p.Tighten) != 0 {
		t.Fatalf("plan with the window held: %+v %v", p, err)
	}
	// The remainder moved by hand (what a reader of the new release does
	// not need): the next up closes the window.
	if _, err := db.Collection("posts").UpdateOne(ctx, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$unset", Value: bson.D{{Key: "comments", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	if res, err = r.Up(ctx); err != nil || res.Tightened == nil || len(res.Tightened.Held) != 0 {
		t.Fatalf("up once no post holds comments: %+v %v", res, err)
	}
	if vs := postsValidators(rec); len(vs) != 1 || !sameDoc(t, vs[0], s2) {
		t.Fatalf("closing sent %v; want S2", vs)
	}
	// Down restores S1 and forgets the extract's progress: up opens the
	// window again.
	if _, err := r.DownTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if vs := postsValidators(rec); len(vs) != 2 || !sameDoc(t, vs[0], bson.D{{Key: "$or", Value: bson.A{s2, s1}}}) || !sameDoc(t, vs[1], s2) {
		t.Fatalf("up after down sent %v; want the window, then S2", vs)
	}
}

func checkHeld(t *testing.T, res *runner.UpResult, want string) {
	t.Helper()
	if res.Tightened == nil || len(res.Tightened.Held) != 1 || res.Tightened.Held[0].Collection != "posts" ||
		!strings.Contains(res.Tightened.Held[0].Message, want) {
		t.Fatalf("up's tightening = %+v; want posts held: %q", res.Tightened, want)
	}
}

// TestExtractWindowOldReleaseMongoDB: on a server that enforces
// validators, an old release's $push of a comment is accepted during the
// move (moved by the next pass) and after its last pass (stays embedded),
// the window survives a second up (reassert compares with it), and once
// no post holds comments up closes it and the server refuses the $push
// (validation code 121, as MongoDB's src/mongo/db/catalog/
// document_validation.h names DocumentValidationFailure).
func TestExtractWindowOldReleaseMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_extract_window", "the extract window's enforcement needs a server with validators (the commands are pinned by TestExtractWindowCommands)")
	ctx := context.Background()
	insertPosts(t, db)
	_, s2 := extractSchemas(t)
	r := newRunner(t, db, extractWindowFS())
	if _, err := r.UpTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	during := 0
	runner.SetHook(r, func(point string, v int64, _ int) {
		switch {
		case point == "reshape.batch" && during == 0:
			during++
			if err := pushComment(ctx, db, 1, "during"); err != nil {
				t.Errorf("an old release's $push during the move was refused: %v", err)
			}
		case point == "recorded" && v == 2:
			if err := pushComment(ctx, db, 2, "after"); err != nil {
				t.Errorf("an old release's $push after the move was refused: %v", err)
			}
		}
	})
	res, err := r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkHeld(t, res, "posts _id 2 still holds comments")
	if n, err := db.Collection("comments").CountDocuments(ctx, bson.D{{Key: "by", Value: "during"}}); err != nil || n != 1 {
		t.Errorf("the comment pushed during the move: %d children, %v; want moved once", n, err)
	}
	if err := pushComment(ctx, db, 2, "later"); err != nil {
		t.Errorf("an old release's $push with the window open was refused: %v", err)
	}
	runner.SetHook(r, nil)
	if res, err = r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	checkHeld(t, res, "posts _id 2 still holds comments")
	if err := pushComment(ctx, db, 1, "still"); err != nil {
		t.Errorf("after a second up the window no longer accepts the $push: %v", err)
	}
	if _, err := db.Collection("posts").UpdateMany(ctx, bson.D{}, bson.D{{Key: "$unset", Value: bson.D{{Key: "comments", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if res, err = r.Up(ctx); err != nil || res.Tightened == nil || len(res.Tightened.Held) != 0 {
		t.Fatalf("up once no post holds comments: %+v %v", res, err)
	}
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "posts"}})
	if err != nil || len(specs) != 1 {
		t.Fatalf("posts spec: %v %v", specs, err)
	}
	if _, err := specs[0].Options.Lookup("validator").Document().LookupErr("$jsonSchema"); err != nil {
		t.Fatalf("posts validator after close = %s; want S2 %v", specs[0].Options, s2)
	}
	var we mongo.WriteException
	if err := pushComment(ctx, db, 1, "refused"); !errors.As(err, &we) || !we.HasErrorCode(121) {
		t.Errorf("$push with the window closed = %v; want refused with 121", err)
	}
}

// TestExtractWindowHeldForOldRelease: when the extract's migration also
// upgrades the parent, a live release that knows only the earlier
// version keeps the extract window open (up says who); once it is gone,
// up closes the extract window to the version window alone (no backfill
// ran, so that one stays open).
func TestExtractWindowHeldForOldRelease(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	insertPosts(t, db)
	files := extractWindowFS()
	files["0002_comments.yaml"].Data = []byte(strings.Replace(string(files["0002_comments.yaml"].Data),
		"commentCount: {bsonType: [int, long]}}}\n", "commentCount: {bsonType: [int, long]}}}\n    upgrade:\n      - default: {commentCount: 0}\n", 1))
	old := fstest.MapFS{"0001_posts.yaml": files["0001_posts.yaml"]}
	reg, err := version.New(old, version.AllowMissingFuncs(true))
	if err != nil {
		t.Fatal(err)
	}
	a, err := release.Announce(ctx, db, reg, release.Options{Name: "1.0", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, db, files)
	if _, err := r.UpTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	ms, err := migration.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	s1 := ms[0].Collection("posts").Validator
	rec.Reset()
	res, err := r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkHeld(t, res, "release 1.0")
	vs := postsValidators(rec)
	if len(vs) != 1 {
		t.Fatalf("posts validators sent = %v; want the window alone", vs)
	}
	or, err := vs[0].LookupErr("$or")
	if err != nil {
		t.Fatalf("window = %s", vs[0])
	}
	branches, _ := or.Array().Values()
	if len(branches) != 2 || !sameDoc(t, branches[1].Document(), s1) {
		t.Fatalf("window = %s; want {$or: [<the version window>, S1]}", vs[0])
	}
	versionWindow := branches[0].Document()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	if res, err = r.Up(ctx); err != nil || res.Tightened == nil || len(res.Tightened.Held) != 0 {
		t.Fatalf("up once the release is gone: %+v %v", res, err)
	}
	if vs := postsValidators(rec); len(vs) != 1 || string(vs[0]) != string(versionWindow) {
		t.Fatalf("closing sent %v; want the version window %s", vs, versionWindow)
	}
	st, err := r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := collStatus(st, "posts"); p.Window != "open" || len(p.ExtractWindows) != 0 {
		t.Errorf("posts after the extract window closed: window %q, extract windows %+v", p.Window, p.ExtractWindows)
	}
}

// TestExtractWindowKeptByLaterMigrations: while 0002's extract window is
// open (a post holds comments), 0003's new posts schema is sent with it
// ({$or: [S3, S1]}), and down of 0003 restores {$or: [S2, S1]}.
func TestExtractWindowKeptByLaterMigrations(t *testing.T) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI(), options.Client().SetMonitor(rec.Monitor())).Database("app")
	insertPosts(t, db)
	files := extractWindowFS()
	files["0003_more.yaml"] = &fstest.MapFile{Data: []byte("collections:\n  posts:\n    validator:\n      $jsonSchema: {bsonType: object, required: [title, slug]}\n")}
	ms, err := migration.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	s1, s2, s3 := ms[0].Collection("posts").Validator, ms[1].Collection("posts").Validator, ms[2].Collection("posts").Validator
	r := newRunner(t, db, files)
	runner.SetHook(r, func(point string, v int64, _ int) {
		if point == "recorded" && v == 2 {
			if err := pushComment(ctx, db, 2, "late"); err != nil {
				t.Error(err)
			}
		}
	})
	if _, err := r.UpTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	res, err := r.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkHeld(t, res, "posts _id 2 still holds comments")
	vs := postsValidators(rec)
	if len(vs) != 2 || !sameDoc(t, vs[0], bson.D{{Key: "$or", Value: bson.A{s2, s1}}}) || !sameDoc(t, vs[1], bson.D{{Key: "$or", Value: bson.A{s3, s1}}}) {
		t.Fatalf("posts validators sent = %v; want {$or: [S2, S1]}, then {$or: [S3, S1]}", vs)
	}
	rec.Reset()
	if _, err := r.DownTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if vs := postsValidators(rec); len(vs) != 1 || !sameDoc(t, vs[0], bson.D{{Key: "$or", Value: bson.A{s2, s1}}}) {
		t.Fatalf("down of 0003 sent %v; want {$or: [S2, S1]}", vs)
	}
}
