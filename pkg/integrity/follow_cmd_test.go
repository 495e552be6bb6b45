package integrity_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/integrity"
	"github.com/mongomig/mongomig/pkg/lease"
)

// storedToken is a resume token in MongoDB's shape ({_data: <hex>}); the
// servers here never handed one out.
var storedToken = bson.D{{Key: "_data", Value: "8263A1B2C3000000012B022C0100296E5A1004"}}

// watchedSchool are the collections the school's rules read: the mirror's
// source, the aggregates' children, the referenced collections.
var watchedSchool = []string{"classes", "comments", "posts", "products"}

// changeStreams returns the aggregate commands whose first stage is
// $changeStream, outside the probe's scratch databases.
func changeStreams(rec *cmdlog.Recorder, db string) []bson.Raw {
	var out []bson.Raw
	for _, c := range rec.Named("aggregate") {
		if d, _ := c.Lookup("$db").StringValueOK(); d != db {
			continue
		}
		if _, err := c.LookupErr("pipeline", "0", "$changeStream"); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// followCommands pins the aggregate a follower sends, up to the server's
// refusal: with a token stored for the same collections, resumeAfter it
// (fullDocument updateLookup, the $match of the watched collections);
// with none, first the cluster time (hello), then the full check and
// repair, then the stream at that time (startAtOperationTime), never
// resumeAfter (MongoDB refuses both at once, error 40674). Both servers
// refuse the stream: the follower answers *ChangeStreamsError naming the
// server's answer and releases its lease.
func followCommands(t *testing.T, uri, name string) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	db := sandboxtest.Connect(t, uri, options.Client().SetMonitor(rec.Monitor())).Database(name)
	_ = db.Drop(ctx)
	t.Cleanup(func() { _ = db.Drop(context.WithoutCancel(ctx)) })
	school(t, db)
	c, err := integrity.New(db, rules(t), integrity.Options{BatchSize: 2, Leases: leases{db}})
	if err != nil {
		t.Fatal(err)
	}
	store := state.New(db)
	raw, _ := bson.Marshal(storedToken)
	if err := store.SaveFollowToken(ctx, &state.FollowToken{Token: raw, Watched: watchedSchool}); err != nil {
		t.Fatal(err)
	}
	wantMatch := `{"$match": {"$or": [{"ns.coll": {"$in": ["classes","comments","posts","products"]}},{"to.coll": {"$in": ["classes","comments","posts","products"]}},{"operationType": {"$in": ["dropDatabase","invalidate"]}}]}}`

	rec.Reset()
	err = integrity.FollowAfterProbe(c, ctx, integrity.FollowOptions{})
	var cse *integrity.ChangeStreamsError
	if !errors.As(err, &cse) || cse.Capability.Reason == "" {
		t.Fatalf("follow with a stored token: %v, want *ChangeStreamsError with the server's answer", err)
	}
	t.Logf("refused: %v", err)
	sent := changeStreams(rec, db.Name())
	if len(sent) != 1 {
		t.Fatalf("%d change stream aggregates sent, want 1", len(sent))
	}
	if got := sent[0].Lookup("aggregate").Int32(); got != 1 {
		t.Errorf("aggregate: %d, want 1 (the database's stream)", got)
	}
	if got, want := sent[0].Lookup("pipeline", "0").String(), `{"$changeStream": {"fullDocument": "updateLookup","resumeAfter": {"_data": "8263A1B2C3000000012B022C0100296E5A1004"}}}`; got != want {
		t.Errorf("stage:\n%s\nwant:\n%s", got, want)
	}
	if got := sent[0].Lookup("pipeline", "1").String(); got != wantMatch {
		t.Errorf("match:\n%s\nwant:\n%s", got, wantMatch)
	}
	if len(rec.Named("update")) != 0 {
		t.Error("a follower resuming from a token ran a full repair")
	}

	// Without a token: cluster time, full pass, stream at that time.
	if err := store.ForgetFollowToken(ctx); err != nil {
		t.Fatal(err)
	}
	var hello struct{ LocalTime time.Time }
	if err := db.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	passes := 0
	err = integrity.FollowAfterProbe(c, ctx, integrity.FollowOptions{FullPass: func(reason string, rep *integrity.RepairReport) {
		passes++
		if reason != "no resume token is stored" || rep.Fixed == 0 {
			t.Errorf("full pass: %q, %d fixed", reason, rep.Fixed)
		}
	}})
	if !errors.As(err, &cse) || passes != 1 {
		t.Fatalf("follow without a token: %v after %d full passes, want *ChangeStreamsError after 1", err, passes)
	}
	all := rec.All()
	at := func(pred func(bson.Raw) bool) int {
		return slices.IndexFunc(all, pred)
	}
	first := func(name string) func(bson.Raw) bool {
		return func(c bson.Raw) bool { e, _ := c.Elements(); return len(e) > 0 && e[0].Key() == name }
	}
	helloAt, writeAt := at(first("hello")), at(first("update"))
	streamAt := at(func(c bson.Raw) bool { _, err := c.LookupErr("pipeline", "0", "$changeStream"); return err == nil })
	if helloAt < 0 || writeAt < 0 || streamAt < 0 || !(helloAt < writeAt && writeAt < streamAt) {
		t.Errorf("hello at %d, the full pass's first write at %d, the stream at %d: want them in that order", helloAt, writeAt, streamAt)
	}
	stage, err := all[streamAt].LookupErr("pipeline", "0", "$changeStream")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stage.Document().LookupErr("resumeAfter"); err == nil {
		t.Errorf("stage %s: resumeAfter beside startAtOperationTime", stage)
	}
	ts, _, ok := stage.Document().Lookup("startAtOperationTime").TimestampOK()
	if !ok {
		t.Fatalf("stage %s: no startAtOperationTime", stage)
	}
	// The servers report no $clusterTime: the follower starts a minute
	// before the server's clock, which read hello.LocalTime just before.
	if lo := hello.LocalTime.Add(-time.Minute - time.Second).Unix(); int64(ts) < lo || int64(ts) > time.Now().Unix() {
		t.Errorf("startAtOperationTime %d: want within a minute before the server's clock (%d)", ts, hello.LocalTime.Unix())
	}
	if tok, err := store.FollowTokenOf(ctx); err != nil || tok != nil {
		t.Errorf("a token was stored (%+v, %v): the stream never opened", tok, err)
	}
	if n, err := db.Collection("mongomig_lock").CountDocuments(ctx, bson.D{{Key: "_id", Value: integrity.FollowLease(db.Name())}}); err != nil || n != 0 {
		t.Errorf("the follow lease is still held (%d, %v)", n, err)
	}
}

func TestFollowCommands(t *testing.T) {
	followCommands(t, sandboxtest.Start(t).URI(), "integrity_follow_cmd")
}

func TestFollowCommandsMongoDB(t *testing.T) {
	sandboxtest.MongoDB(t, "integrity_follow_cmd", "TestFollowCommands covers the sandbox")
	followCommands(t, os.Getenv("MONGOMIG_TEST_URI"), "integrity_follow_cmd")
}

// followRefused: Follow itself probes first and, on a server without
// change streams, answers *ChangeStreamsError before it takes its lease,
// writes anything or opens the database's stream.
func followRefused(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	school(t, db)
	c, err := integrity.New(db, rules(t), integrity.Options{Leases: leases{db}})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Follow(ctx, integrity.FollowOptions{})
	var cse *integrity.ChangeStreamsError
	if !errors.As(err, &cse) || cse.Capability.Available {
		t.Fatalf("follow: %v, want *ChangeStreamsError", err)
	}
	t.Logf("%v", err)
	for _, coll := range []string{"mongomig_lock", "mongomig_backfill"} {
		if n, err := db.Collection(coll).EstimatedDocumentCount(ctx); err != nil || n != 0 {
			t.Errorf("%s holds %d documents (%v): the refused follower wrote", coll, n, err)
		}
	}
	if got := intOf(t, db, "posts", "b", "commentCount"); got != 3 {
		t.Errorf("post b commentCount %d: the refused follower repaired", got)
	}
}

func TestFollowRefused(t *testing.T) { followRefused(t, sandboxtest.Database(t, "integrity")) }

func TestFollowRefusedMongoDB(t *testing.T) {
	followRefused(t, sandboxtest.MongoDB(t, "integrity_follow_refused", "TestFollowRefused covers the sandbox"))
}

// followToken: the token document's owner: saved and read back, covering
// exactly the collections it was saved with; a save whose lease was lost
// (removed by a forced unlock) writes nothing.
func followToken(t *testing.T, db *mongo.Database) {
	ctx := context.Background()
	store := state.New(db)
	if tok, err := store.FollowTokenOf(ctx); err != nil || tok != nil {
		t.Fatalf("a new database's token: %+v, %v", tok, err)
	}
	raw, _ := bson.Marshal(storedToken)
	l, err := leases{db}.Acquire(ctx, integrity.FollowLease(db.Name()), 0)
	if err != nil {
		t.Fatal(err)
	}
	lctx := lease.ContextWith(ctx, l)
	if err := store.SaveFollowToken(lctx, &state.FollowToken{Token: raw, Watched: []string{"posts", "classes"}, Events: 3}); err != nil {
		t.Fatal(err)
	}
	tok, err := store.FollowTokenOf(ctx)
	if err != nil || tok == nil {
		t.Fatalf("read back: %+v, %v", tok, err)
	}
	if tok.Token.String() != bson.Raw(raw).String() || tok.Events != 3 || !tok.Covers([]string{"classes", "posts"}) || tok.Covers([]string{"classes"}) {
		t.Errorf("read back %+v", tok)
	}
	if _, err := lease.Remove(ctx, db.Collection("mongomig_lock"), integrity.FollowLease(db.Name()), true); err != nil {
		t.Fatal(err)
	}
	other, _ := bson.Marshal(bson.D{{Key: "_data", Value: "82FF"}})
	err = store.SaveFollowToken(lctx, &state.FollowToken{Token: other, Watched: []string{"classes", "posts"}})
	if !errors.Is(err, lease.ErrLost) {
		t.Errorf("a save after the lease was removed: %v, want lease.ErrLost", err)
	}
	if tok, _ := store.FollowTokenOf(ctx); tok == nil || tok.Token.String() != bson.Raw(raw).String() {
		t.Errorf("the token after the fenced save: %+v, want the first one", tok)
	}
	if err := store.ForgetFollowToken(lctx); !errors.Is(err, lease.ErrLost) {
		t.Errorf("a removal after the lease was removed: %v, want lease.ErrLost", err)
	}
}

func TestFollowToken(t *testing.T) { followToken(t, sandboxtest.Database(t, "integrity")) }

func TestFollowTokenMongoDB(t *testing.T) {
	followToken(t, sandboxtest.MongoDB(t, "integrity_follow_token", "TestFollowToken covers the sandbox"))
}

// followOneAtATime: while another follower holds the database's follow
// lease, a second one gives up (a *lease.TimeoutError naming it) before
// it sends the stream's aggregate or writes anything; a token stored for
// other collections than the rules read is not resumed from: the
// follower runs the full pass first.
func followOneAtATime(t *testing.T, uri, name string) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	db := sandboxtest.Connect(t, uri, options.Client().SetMonitor(rec.Monitor())).Database(name)
	_ = db.Drop(ctx)
	t.Cleanup(func() { _ = db.Drop(context.WithoutCancel(ctx)) })
	school(t, db)
	c, err := integrity.New(db, rules(t), integrity.Options{Leases: leases{db}})
	if err != nil {
		t.Fatal(err)
	}
	held, err := leases{db}.Acquire(ctx, integrity.FollowLease(db.Name()), 0)
	if err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	err = integrity.FollowAfterProbe(c, ctx, integrity.FollowOptions{})
	var te *lease.TimeoutError
	if !errors.As(err, &te) || te.Name != integrity.FollowLease(db.Name()) {
		t.Errorf("a second follower: %v, want the follow lease's *lease.TimeoutError", err)
	}
	if n := len(changeStreams(rec, db.Name())) + len(rec.Named("update")); n != 0 {
		t.Errorf("the second follower sent %d streams and updates", n)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}

	raw, _ := bson.Marshal(storedToken)
	if err := state.New(db).SaveFollowToken(ctx, &state.FollowToken{Token: raw, Watched: []string{"classes"}}); err != nil {
		t.Fatal(err)
	}
	var reasons []string
	err = integrity.FollowAfterProbe(c, ctx, integrity.FollowOptions{FullPass: func(reason string, _ *integrity.RepairReport) { reasons = append(reasons, reason) }})
	var cse *integrity.ChangeStreamsError
	if !errors.As(err, &cse) || len(reasons) != 1 || !strings.Contains(reasons[0], "the stored resume token's stream watched [classes], the rules read [classes comments posts products]") {
		t.Errorf("follow with a token of other collections: %v after full passes %q", err, reasons)
	}
}

func TestFollowOneAtATime(t *testing.T) {
	followOneAtATime(t, sandboxtest.Start(t).URI(), "integrity_follow_one")
}

func TestFollowOneAtATimeMongoDB(t *testing.T) {
	sandboxtest.MongoDB(t, "integrity_follow_one", "TestFollowOneAtATime covers the sandbox")
	followOneAtATime(t, os.Getenv("MONGOMIG_TEST_URI"), "integrity_follow_one")
}
