package reshape_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/reshape"
)

// scenario is issue 27's Done-when on one database: the blog's move, with
// an old instance appending to posts' embedded comments before any
// command the move sends (found by the driver's command monitor) and at
// the move's hook points, and (during down) the new release adding
// comments as children; the move is killed at seeded random points (a
// dead stop at a hook point, or its context cancelled as a command
// starts) and resumed.
type scenario struct {
	t     *testing.T
	rng   *rand.Rand
	plain *mongo.Database // the actors' and the lock's client
	moved *mongo.Database // the move's client, monitored
	want  map[int32][]string
	posts int32
	down  bool
	// structs: the old instance also replaces posts from its Go struct,
	// which does not know _mongomig (rule 4's duplicates are accepted).
	structs bool
	acts    int
	budget  int   // actions left in this phase
	focus   int32 // the post the command about to start names (0: none)
	cmds    int
	killAt  int // command number whose start cancels the move (0: none)
	hookAt  int // hook call that stops the move dead (0: none)
	hooks   int
	cancel  context.CancelFunc
}

func (s *scenario) started(_ context.Context, e *event.CommandStartedEvent) {
	if s.cancel == nil || e.DatabaseName != s.moved.Name() {
		return
	}
	s.cmds++
	s.focus = focusOf(e.Command)
	if s.rng.Intn(5) == 0 {
		s.act()
	}
	if s.cmds == s.killAt {
		s.cancel()
	}
}

func (s *scenario) hook(string, int64, int) {
	s.hooks++
	if s.rng.Intn(3) == 0 {
		s.act()
	}
	if s.hooks == s.hookAt {
		panic(errKilled)
	}
}

// focusOf is the post a command names: the _id of a find or update of
// posts, or the postId of a find of comments.
func focusOf(cmd bson.Raw) int32 {
	filter, ok := cmd.Lookup("filter").DocumentOK()
	if !ok {
		filter, ok = cmd.Lookup("updates", "0", "q").DocumentOK()
	}
	if !ok {
		return 0
	}
	for _, k := range []string{"_id", "postId"} {
		if v, ok := filter.Lookup(k).Int32OK(); ok {
			return v
		}
	}
	return 0
}

// act: the old instance appends a comment to a random post ($push, or
// read, append and replace the whole post); during down, the new release
// may instead add one as a child and count it.
func (s *scenario) act() {
	if s.budget == 0 { // the old instances stop, as they must for the move to end
		return
	}
	s.budget--
	ctx := context.Background()
	s.acts++
	p := int32(s.rng.Intn(int(s.posts))) + 1
	if s.focus != 0 && s.rng.Intn(4) != 0 {
		p = s.focus // the post the move is working on
	}
	posts := s.plain.Collection("posts")
	if s.down && s.rng.Intn(2) == 0 {
		id := bson.NewObjectID()
		cm := bson.D{{Key: "_id", Value: id}, {Key: "by", Value: "new"}, {Key: "text", Value: fmt.Sprintf("new %d", s.acts)}}
		s.want[p] = append(s.want[p], key(cm))
		child := bson.D{{Key: "_id", Value: id}, {Key: "postId", Value: p}, cm[1], cm[2]}
		if _, err := s.plain.Collection("comments").InsertOne(ctx, child); err != nil {
			s.t.Error(err)
		}
		if _, err := posts.UpdateOne(ctx, bson.D{{Key: "_id", Value: p}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "commentCount", Value: 1}}}}); err != nil {
			s.t.Error(err)
		}
		return
	}
	cm := bson.D{{Key: "by", Value: "old"}, {Key: "text", Value: fmt.Sprintf("late %d", s.acts)}}
	if s.rng.Intn(4) == 0 { // equal to others, without an _id: told apart by the parent's epoch
		cm = bson.D{{Key: "by", Value: "old"}, {Key: "text", Value: "+1"}}
		if s.structs { // equal to the blog's own, which the move may have taken already
			cm[0].Value = "bob"
		}
	}
	s.want[p] = append(s.want[p], key(cm))
	if s.rng.Intn(2) == 0 {
		if _, err := posts.UpdateOne(ctx, bson.D{{Key: "_id", Value: p}}, bson.D{{Key: "$push", Value: bson.D{{Key: "comments", Value: cm}}}}); err != nil {
			s.t.Error(err)
		}
		return
	}
	if s.structs && s.rng.Intn(2) == 0 {
		s.structReplace(p, cm)
		return
	}
	var doc bson.D
	if err := posts.FindOne(ctx, bson.D{{Key: "_id", Value: p}}).Decode(&doc); err != nil {
		s.t.Error(err)
		return
	}
	found := false
	for i, e := range doc {
		if e.Key == "comments" {
			arr, _ := e.Value.(bson.A)
			doc[i].Value, found = append(arr, cm), true
		}
	}
	if !found {
		doc = append(doc, bson.E{Key: "comments", Value: bson.A{cm}})
	}
	if _, err := posts.ReplaceOne(ctx, bson.D{{Key: "_id", Value: p}}, doc); err != nil {
		s.t.Error(err)
	}
}

// structReplace: the old instance reads post p into its struct (comments
// with their _id, no _mongomig), appends cm and replaces the whole post.
func (s *scenario) structReplace(p int32, cm bson.D) {
	type comment struct {
		ID   any    `bson:"_id,omitempty"`
		By   string `bson:"by"`
		Text string `bson:"text"`
	}
	var post struct {
		ID           int32     `bson:"_id"`
		Title        string    `bson:"title"`
		Comments     []comment `bson:"comments,omitempty"`
		CommentCount int64     `bson:"commentCount,omitempty"`
	}
	ctx := context.Background()
	posts := s.plain.Collection("posts")
	if err := posts.FindOne(ctx, bson.D{{Key: "_id", Value: p}}).Decode(&post); err != nil {
		s.t.Error(err)
		return
	}
	post.Comments = append(post.Comments, comment{By: cm[0].Value.(string), Text: cm[1].Value.(string)})
	if _, err := posts.ReplaceOne(ctx, bson.D{{Key: "_id", Value: p}}, post); err != nil {
		s.t.Error(err)
	}
}

// until runs step (the move, or down's revert) under the lock, killing it
// at random points, until a run completes.
func (s *scenario) until(what string, step func(ctx context.Context) error) {
	for attempt := 0; ; attempt++ {
		s.cmds, s.hooks, s.killAt, s.hookAt = 0, 0, 0, 0
		if attempt < 8 { // then one runs to its end
			if s.rng.Intn(2) == 0 {
				s.killAt = 1 + s.rng.Intn(120)
			} else {
				s.hookAt = 1 + s.rng.Intn(40)
			}
		}
		err, died := s.once(step)
		switch {
		case err == nil && !died:
			s.t.Logf("%s: done at attempt %d, %d actions so far", what, attempt+1, s.acts)
			return
		case err != nil && !errors.Is(err, context.Canceled) && !errors.As(err, new(*reshape.BusyError)):
			s.t.Fatalf("%s, attempt %d: %v", what, attempt+1, err)
		case attempt > 30:
			s.t.Fatalf("%s: not done after %d attempts", what, attempt)
		}
	}
}

func (s *scenario) once(step func(ctx context.Context) error) (err error, died bool) {
	defer func() {
		s.cancel = nil
		if r := recover(); r != nil {
			if r != errKilled {
				panic(r)
			}
			died = true
		}
	}()
	ctx := context.Background()
	l, lerr := lease.Acquire(ctx, s.plain.Collection("mongomig_lock"), lease.MigrationLock, lease.Options{Owner: "scenario"})
	if lerr != nil {
		s.t.Fatal(lerr)
	}
	return lease.Hold(ctx, l, func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		s.cancel = cancel
		return step(ctx)
	}), false
}

// TestBlogDoneWhenMongoDB: issue 27's Done-when: every comment exactly
// once after the move (children and the embedded remainder, the count
// matching the children), and again after down re-embedded them (then
// none is left a child once the actors stop).
func TestBlogDoneWhenMongoDB(t *testing.T) {
	uris := map[string]string{"sandbox": ""}
	if u := os.Getenv("MONGOMIG_TEST_URI"); u != "" {
		uris["MongoDB"] = u
	}
	for _, server := range []string{"sandbox", "MongoDB"} {
		t.Run(server, func(t *testing.T) {
			uri, ok := uris[server]
			if !ok {
				t.Skip("MONGOMIG_TEST_URI is not set: the sandbox subtest covers the same on FerretDB v1")
			}
			if uri == "" {
				uri = sandboxtest.Start(t).URI()
			}
			for _, seed := range []int64{1, 2, 3} {
				t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { blogScenario(t, uri, seed) })
			}
		})
	}
}

// TestBlogStructReplacesMongoDB: the Done-when scenario with an old
// instance that also replaces posts from its Go struct (dropping
// _mongomig) at random command boundaries: no comment is ever lost, up or
// down; after up, every comment more than written is a child marked by
// its {replaced} epoch (rule 4).
func TestBlogStructReplacesMongoDB(t *testing.T) {
	uris := map[string]string{"sandbox": ""}
	if u := os.Getenv("MONGOMIG_TEST_URI"); u != "" {
		uris["MongoDB"] = u
	}
	for _, server := range []string{"sandbox", "MongoDB"} {
		t.Run(server, func(t *testing.T) {
			uri, ok := uris[server]
			if !ok {
				t.Skip("MONGOMIG_TEST_URI is not set: the sandbox subtest covers the same on FerretDB v1")
			}
			if uri == "" {
				uri = sandboxtest.Start(t).URI()
			}
			for _, seed := range []int64{4, 5, 6} {
				t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { scenarioOn(t, uri, seed, true) })
			}
		})
	}
}

func blogScenario(t *testing.T, uri string, seed int64) { scenarioOn(t, uri, seed, false) }

func scenarioOn(t *testing.T, uri string, seed int64, structs bool) {
	name := fmt.Sprintf("reshape_done_%d", seed)
	s := &scenario{t: t, rng: rand.New(rand.NewSource(seed)), posts: 20, structs: structs}
	s.plain = sandboxtest.Connect(t, uri).Database(name)
	s.moved = sandboxtest.Connect(t, uri, mopts.Client().SetMonitor(&event.CommandMonitor{Started: s.started})).Database(name)
	ctx := context.Background()
	_ = s.plain.Drop(ctx)
	t.Cleanup(func() { _ = s.plain.Drop(context.Background()) })
	s.want = loadBlog(t, s.plain, int(s.posts))
	m := blogMigration(t, blogFile)
	opts := reshape.Options{Batch: 4, Hook: s.hook}
	s.budget = 40
	s.until("up", func(ctx context.Context) error { _, err := reshape.Run(ctx, s.moved, m, opts); return err })
	d := noDupes
	if structs {
		d = markedDupes
	}
	checkMoved(t, s.plain, s.want, d)
	if structs { // the duplicates are embedded back, and down's record can go with _mongomig too
		d = anyDupes
	}
	s.down, s.budget = true, 40
	s.until("down", func(ctx context.Context) error { _, err := reshape.Revert(ctx, s.moved, m, opts); return err })
	checkMoved(t, s.plain, s.want, d)
	// A child the new release added after down's last pass stays a child;
	// once the actors stop, one more revert embeds it.
	if _, err := revert(t, s.plain, m, reshape.Options{}); err != nil {
		t.Fatal(err)
	}
	checkMoved(t, s.plain, s.want, d)
	checkReembedded(t, s.plain)
	if s.acts == 0 {
		t.Fatal("no actor ran")
	}
}
