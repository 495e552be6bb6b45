package runner_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
	"github.com/mongomig/mongomig/pkg/version/versioned"
)

// exploreFS: users go 0 -> 2 -> 3. 0002 moves email under contact (and
// swaps the unique index), 0003 moves score under stats; every step is
// declarative (the server-side backfill runs) and has a downgrade.
var exploreFS = fstest.MapFS{
	"0001_users.yaml": {Data: []byte(`collections:
  users:
    validator: {$jsonSchema: {bsonType: object, required: [name, email]}}
    validationLevel: moderate
    indexes:
      create:
        - {keys: {email: 1}, unique: true, sparse: true}
`)},
	"0002_contact.yaml": {Data: []byte(`collections:
  users:
    validator: {$jsonSchema: {bsonType: object, required: [name, contact, status]}}
    validationLevel: moderate
    upgrade:
      - rename: {email: contact.email}
      - default: {status: active}
    downgrade:
      - rename: {contact.email: email}
      - unset: [status, contact]
    indexes:
      drop: [email_1]
      create:
        - {keys: {contact.email: 1}, unique: true, sparse: true}
`)},
	"0003_stats.yaml": {Data: []byte(`collections:
  users:
    validator: {$jsonSchema: {bsonType: object, required: [name, contact, status, stats, level]}}
    validationLevel: moderate
    upgrade:
      - rename: {score: stats.score}
      - default: {level: 1}
    downgrade:
      - rename: {stats.score: score}
      - unset: [level, stats]
`)},
}

func exploreFilesUpTo(v int64) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, f := range exploreFS {
		if n, _ := strconv.ParseInt(name[:4], 10, 64); n <= v {
			fsys[name] = f
		}
	}
	return fsys
}

// docVersionAt is the users document version of the release knowing
// files up to v.
func docVersionAt(v int64) int64 {
	switch {
	case v >= 3:
		return 3
	case v >= 2:
		return 2
	}
	return 0
}

// path is where a logical field lives at a document version.
func path(field string, v int64) string {
	switch {
	case field == "email" && v >= 2:
		return "contact.email"
	case field == "score" && v >= 3:
		return "stats.score"
	}
	return field
}

// userAt is a release's struct at document version v: what it writes
// back whole. A field it expects and the document lacks is its zero value.
func userAt(v int64, id int, name, email string, score int32) bson.D {
	d := bson.D{{Key: "_id", Value: id}, {Key: "name", Value: name}}
	switch v {
	case 0:
		d = append(d, bson.E{Key: "email", Value: email}, bson.E{Key: "score", Value: score})
	case 2:
		d = append(d, bson.E{Key: "contact", Value: bson.D{{Key: "email", Value: email}}}, bson.E{Key: "status", Value: "active"}, bson.E{Key: "score", Value: score})
	default:
		d = append(d, bson.E{Key: "contact", Value: bson.D{{Key: "email", Value: email}}}, bson.E{Key: "status", Value: "active"},
			bson.E{Key: "stats", Value: bson.D{{Key: "score", Value: score}}}, bson.E{Key: "level", Value: 1})
	}
	return d
}

// xworld is one exploration: the scheduler, an ungated checker client,
// and what the actors were told.
type xworld struct {
	t          *testing.T
	s          *sched
	uri        string
	dbName     string
	check      *mongo.Database // ungated
	lease      time.Duration
	mu         sync.Mutex
	acked      map[int]map[string]any // _id -> logical field -> last acknowledged value
	nextID     int
	broken     []violation
	actors     []string
	stallPhase int
	regs       map[int64]*version.Registry // by files, for validAt
	paused     map[string]int              // actor -> steps it stays paused
	pausedOnce map[string]bool
	stallUntil time.Time
}

type violation struct {
	hole int // 0: no known hole
	msg  string
}

func (w *xworld) violate(hole int, format string, a ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range w.broken {
		if v.hole == hole {
			return // the first one per hole is the one to read
		}
	}
	w.broken = append(w.broken, violation{hole, fmt.Sprintf(format, a...)})
}

func (w *xworld) ack(id int, field string, v any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.acked[id] == nil {
		w.acked[id] = map[string]any{}
	}
	w.acked[id][field] = v
}

func (w *xworld) newID() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextID++
	return w.nextID
}

func (w *xworld) randInt(n int) int {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.rng.IntN(n)
}

// db is actor's gated view of the database.
func (w *xworld) db(actor string) *mongo.Database {
	return w.s.client(w.uri, actor).Database(w.dbName)
}

func (w *xworld) runner(db *mongo.Database, files int64) *runner.Runner {
	return newRunner(w.t, db, exploreFilesUpTo(files), runner.WithLockWait(0), runner.WithLockLease(w.lease))
}

func (w *xworld) registry(files int64) *version.Registry {
	reg, err := version.New(exploreFilesUpTo(files), version.WithCollections("users"))
	if err != nil {
		w.t.Fatal(err)
	}
	return reg
}

// accepts models the validator in force for an insert or a
// whole-document write at document version v: the version conditions of
// the last validator sent (collMod or create), checked at the write's own
// scheduling point; where the server enforces validators it refuses
// itself too (see refused).
func (w *xworld) accepts(v int64) bool {
	vs := w.s.acceptedVersions()
	return vs == nil || vs[v]
}

// refused reports whether err is the server's document validation failure.
func refused(err error) bool {
	var se mongo.ServerError
	return errors.As(err, &se) && se.HasErrorCode(121)
}

// oldRelease is a release knowing files up to files: it inserts users at
// its version and rewrites users whole from its struct.
// It starts after up to delay scheduling points of thought (so that its
// writes can land late in another actor's run).
func (w *xworld) oldRelease(actor string, files int64, ops, delay int) func() {
	db := w.db(actor)
	reg := w.registry(files)
	v := docVersionAt(files)
	ctx := context.Background()
	return func() {
		for i := w.randInt(delay + 1); i > 0; i-- {
			w.s.wait(actor, "think")
		}
		for i := 0; i < ops; i++ {
			if w.randInt(2) == 0 {
				id := w.newID()
				email := fmt.Sprintf("u%d@%s", id, actor)
				doc, err := reg.Stamp("users", userAt(v, id, actor, email, int32(id)))
				if err != nil {
					w.t.Error(err)
					return
				}
				w.s.wait(actor, fmt.Sprintf("insert _id %d at version %d", id, v)) // check and write at one point
				if !w.accepts(v) {
					w.s.logf("%s: insert _id %d refused by the validator in force", actor, id)
					continue
				}
				if _, err := w.check.Collection("users").InsertOne(ctx, doc); refused(err) {
					continue
				} else if err != nil {
					w.t.Errorf("%s insert: %v", actor, err)
					return
				}
				w.ack(id, "email", email)
				w.ack(id, "score", int32(id))
				continue
			}
			w.replace(ctx, actor, db, reg, v)
		}
	}
}

// replace reads a user, upgrades it with the release's registry, changes
// its score and writes its struct back whole.
func (w *xworld) replace(ctx context.Context, actor string, db *mongo.Database, reg *version.Registry, v int64) {
	id := 1 + w.randInt(max(w.nextID, 1))
	var stored bson.D
	if err := db.Collection("users").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&stored); err != nil {
		return
	}
	up, _, err := reg.Upgrade("users", stored)
	if _, marked := dMap(stored)[version.MarkerField]; marked {
		w.s.logf("%s: read _id %d partway through a server-side upgrade: %v (upgrade: %v)", actor, id, stored, err)
	}
	if err != nil {
		return // too new for it: an old release leaves it alone
	}
	// It changes one field and writes back the other as it read it.
	m := dMap(up)
	email, _ := lookupPath(m, path("email", v)).(string)
	score, _ := lookupPath(m, path("score", v)).(int32)
	changed := "score"
	if w.randInt(2) == 0 {
		score = int32(1000 + w.randInt(1000))
	} else {
		changed, email = "email", fmt.Sprintf("r%d-%d@%s", id, w.randInt(1000), actor)
	}
	doc, err := reg.Stamp("users", userAt(v, id, actor, email, score))
	if err != nil {
		w.t.Error(err)
		return
	}
	w.s.wait(actor, fmt.Sprintf("replace _id %d at version %d", id, v))
	if !w.accepts(v) {
		w.s.logf("%s: replace _id %d refused by the validator in force", actor, id)
		return
	}
	res, err := w.check.Collection("users").ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, doc)
	if err != nil || res.MatchedCount == 0 {
		return
	}
	// Only the field it changed is a new acknowledged write.
	if changed == "score" {
		w.ack(id, "score", score)
	} else {
		w.ack(id, "email", email)
	}
}

func lookupPath(m bson.M, p string) any {
	var cur any = m
	for _, part := range splitDots(p) {
		switch d := cur.(type) {
		case bson.M:
			cur = d[part]
		case bson.D:
			cur = dMap(d)[part]
		default:
			return nil
		}
	}
	return cur
}

func splitDots(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

// currentRelease is the release knowing every file, through the versioned
// wrapper: FindOneAndUpdate of a migrated field (email), reads with
// write-back.
func (w *xworld) currentRelease(actor string, policy versioned.Policy, ops int) func() {
	db := w.db(actor)
	var opts []versioned.Option
	if policy == versioned.Deferred {
		opts = append(opts, versioned.WithDeferred(versioned.DeferredOptions{}))
	} else {
		opts = append(opts, versioned.WithWriteBack(policy))
	}
	ctx := context.Background()
	return func() {
		users := versioned.New(db.Collection("users"), w.registry(3), opts...)
		defer func() { _ = users.Close(ctx) }()
		for i := 0; i < ops; i++ {
			id := 1 + w.randInt(max(w.nextID, 1))
			if w.randInt(2) == 0 {
				var d bson.M
				_ = users.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d)
				continue
			}
			email := fmt.Sprintf("new%d-%d@%s", id, i, actor)
			var got bson.M
			err := users.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "contact.email", Value: email}}}},
				options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&got)
			var tooNew *version.TooNewError
			if errors.Is(err, mongo.ErrNoDocuments) || errors.As(err, &tooNew) {
				continue
			}
			if err != nil {
				w.s.logf("%s: findOneAndUpdate _id %d: %v", actor, id, err)
				continue
			}
			w.ack(id, "email", email)
			if served := lookupPath(got, "contact.email"); served != email {
				w.violate(2, "%s: findOneAndUpdate $set contact.email %q on _id %d served %v", actor, email, id, served)
			}
		}
	}
}

// backfillActor runs a backfill of the release knowing files up to files.
func (w *xworld) backfillActor(actor string, files int64, o backfill.Options) func() {
	db := w.db(actor)
	return func() {
		o.Collections = []string{"users"}
		_, err := backfill.Run(context.Background(), w.runner(db, files), o)
		w.s.logf("%s: backfill ends: %v", actor, err)
	}
}

// upActor runs `up --to target` (tightening the windows a backfill
// proved) with the files up to target, tries times (the lock may be held).
func (w *xworld) upActor(actor string, target int64, tries int) func() {
	db := w.db(actor)
	return func() {
		for i := 0; i < tries; i++ {
			applied, err := w.runner(db, target).UpTo(context.Background(), target)
			w.s.logf("%s: up --to %d: %v", actor, target, err)
			if err != nil {
				continue
			}
			for _, a := range applied.Applied {
				if a.Direction == "tighten" {
					w.checkTightened(actor)
				}
			}
			w.checkStatus(actor, target)
			return
		}
	}
}

// checkStatus: after a successful up or down to target, status reports
// target applied and nothing pending of the files up to target.
func (w *xworld) checkStatus(actor string, target int64) {
	st, err := w.runner(w.check, target).Status(context.Background())
	if err != nil {
		w.t.Error(err)
		return
	}
	if st.Current != target || st.Pending != 0 {
		w.violate(0, "%s: after its success at %d, status says current %d, %d pending", actor, target, st.Current, st.Pending)
	}
}

// checkTightened: once up closed the window, no document is below the
// current version.
func (w *xworld) checkTightened(actor string) {
	cv := w.registry(w.ledgerTop()).Current("users")
	n, err := w.check.Collection("users").CountDocuments(context.Background(), bson.D{{Key: "version", Value: bson.D{{Key: "$ne", Value: cv}}}})
	if err == nil && n > 0 {
		w.violate(5, "%s: up closed the window but %d documents are not at version %d", actor, n, cv)
	}
}

// downActor runs `down --to target` with the files up to from.
func (w *xworld) downActor(actor string, from, target int64) func() {
	db := w.db(actor)
	return func() {
		_, err := w.runner(db, from).DownTo(context.Background(), target)
		w.s.logf("%s: down --to %d: %v", actor, target, err)
		if err != nil {
			return
		}
		w.checkStatus(actor, target)
		top := docVersionAt(target)
		n, err := w.check.Collection("users").CountDocuments(context.Background(), bson.D{{Key: "version", Value: bson.D{{Key: "$gt", Value: top}}}})
		if err == nil && n > 0 {
			w.violate(6, "%s: down --to %d succeeded but %d documents are above version %d", actor, target, n, top)
		}
	}
}

// unlockActor is an operator running `unlock --force` after waiting for
// points scheduling points.
func (w *xworld) unlockActor(actor string, points int) func() {
	db := w.db(actor)
	return func() {
		for i := 0; i < points; i++ {
			w.s.wait(actor, "think")
		}
		h, err := w.runner(db, 3).Unlock(context.Background(), true)
		w.s.logf("%s: unlock --force: %v %v", actor, h, err)
	}
}

func (w *xworld) ledgerTop() int64 {
	v := ledgerVersions(w.t, w.check)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)-1]
}

func dMap(d bson.D) bson.M {
	m := bson.M{}
	for _, e := range d {
		m[e.Key] = e.Value
	}
	return m
}
