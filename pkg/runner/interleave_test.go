package runner_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// interleaveFS: items go 0 -> 2 -> 3, every step declarative (so the
// server-side backfill runs), every version with its own schema and a
// downgrade (so down can revert).
var interleaveFS = fstest.MapFS{
	"0001_items.yaml": {Data: []byte(`collections:
  items:
    validator: {$jsonSchema: {bsonType: object, required: [name]}}
    validationLevel: moderate
`)},
	"0002_title.yaml": {Data: []byte(`collections:
  items:
    validator: {$jsonSchema: {bsonType: object, required: [title, tags]}}
    upgrade:
      - default: {tags: []}  # first: on a document that has tags, it only advances the marker
      - rename: {name: title}
    downgrade:
      - rename: {title: name}
      - unset: [tags]
`)},
	"0003_status.yaml": {Data: []byte(`collections:
  items:
    validator: {$jsonSchema: {bsonType: object, required: [title, tags, status, rev]}}
    upgrade:
      - default: {status: new}
      - set: {rev: 1}
    downgrade:
      - unset: [status, rev]
`)},
}

// world is the state of one interleaving: the database, what the
// application was told was written, and the reads awaiting a write-back.
type world struct {
	t       *testing.T
	ctx     context.Context
	rng     *rand.Rand
	db      *mongo.Database
	items   *mongo.Collection
	applied int64 // the highest applied migration
	nextID  int
	notes   map[int]int // _id -> the last acknowledged note
	reads   []pendingRead
	log     []string
	// killBackfill cancels the running backfill, if any.
	killBackfill context.CancelFunc
}

type pendingRead struct {
	reg              *version.Registry
	stored, upgraded bson.D
}

// TestInterleavings runs seeded interleavings of the whole rolling-deploy
// protocol: an old release inserting documents, the application updating
// fields, lazy readers with write-back (read and write-back are separate
// steps, so anything can happen between them), backfills on both paths
// (the server-side one interrupted between its units by other actors and
// killed at random), up (applying one more migration, and tightening) and
// down. After every step it checks the invariants of docs/backfill.md: no
// acknowledged application write is lost, every document has the shape
// of its version (no upgrade step skipped), no current document carries a
// step marker, a closed window means no older document exists, and a
// successful down leaves no document above its target.
//
// By default it runs seeds 1-12, and 22, 3 and 28, which found issue 11's
// holes 1 (a write-back erasing the step marker), 6 (the window not
// reopened after down) and 3 (tightening on a stale proof) when each fix
// was taken out. MONGOMIG_INTERLEAVINGS=N runs seeds 1..N instead (make
// reliability: 300); MONGOMIG_SEED replays one.
func TestInterleavings(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 22, 28}
	if n, err := strconv.Atoi(os.Getenv("MONGOMIG_INTERLEAVINGS")); err == nil {
		seeds = nil
		for s := 1; s <= n; s++ {
			seeds = append(seeds, uint64(s))
		}
	}
	if s, err := strconv.ParseUint(os.Getenv("MONGOMIG_SEED"), 10, 64); err == nil {
		seeds = []uint64{s}
	}
	t.Parallel() // a sandbox of its own
	srv := sandboxtest.Start(t)
	client := sandboxtest.Connect(t, srv.URI())
	// Each seed has a database of its own (and leases of 10s, no sleep):
	// the seeds run side by side.
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			db := client.Database(fmt.Sprintf("interleave_%d", seed))
			w := &world{t: t, ctx: context.Background(), rng: rand.New(rand.NewPCG(seed, 0)), db: db, items: db.Collection("items"), notes: map[int]int{}}
			if err := w.run(60); err != nil {
				t.Fatalf("seed %d (replay: MONGOMIG_SEED=%d go test -run TestInterleavings ./pkg/runner): %v\nsteps:\n%s",
					seed, seed, err, joinLines(w.log))
			}
		})
	}
}

func joinLines(l []string) string {
	out := ""
	for i, s := range l {
		out += fmt.Sprintf("  %3d %s\n", i+1, s)
	}
	return out
}

// run performs n steps, checking the invariants after each.
func (w *world) run(n int) error {
	if _, err := w.runnerAt(1).UpTo(w.ctx, 1); err != nil {
		return err
	}
	w.applied = 1
	for i := 0; i < 4; i++ {
		w.insertOld()
	}
	for i := 0; i < n; i++ {
		if err := w.step(); err != nil {
			return err
		}
		if err := w.check(); err != nil {
			return err
		}
	}
	return nil
}

// step performs one operation, chosen by the seed.
func (w *world) step() error {
	switch k := w.rng.IntN(12); {
	case k < 2:
		w.insertOld()
	case k < 4:
		w.appUpdate()
	case k < 6:
		w.lazyRead()
	case k < 8:
		return w.writeBack()
	case k < 10:
		return w.backfill(k == 9)
	case k < 11:
		return w.up()
	default:
		return w.down()
	}
	return nil
}

// filesUpTo are the migration files of the release that knows migrations
// up to v.
func filesUpTo(v int64) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, f := range interleaveFS {
		if n, _ := strconv.ParseInt(name[:4], 10, 64); n <= v {
			fsys[name] = f
		}
	}
	return fsys
}

// runnerAt is mongomig as shipped with the release that knows migrations
// up to v.
func (w *world) runnerAt(v int64) *runner.Runner {
	r := newRunner(w.t, w.db, filesUpTo(v), runner.WithLockLease(10*time.Second))
	runner.SetHook(r, w.hook)
	return r
}

// registryAt is the application release that knows migrations up to v.
func (w *world) registryAt(v int64) *version.Registry {
	reg, err := version.New(filesUpTo(v), version.WithCollections("items"))
	if err != nil {
		w.t.Fatal(err)
	}
	return reg
}

// insertOld is a release one migration behind (or current) inserting a
// document stamped with its version, in its shape.
func (w *world) insertOld() {
	at := w.applied - int64(w.rng.IntN(2))
	reg := w.registryAt(at)
	w.nextID++
	doc := bson.D{{Key: "_id", Value: w.nextID}}
	switch reg.Current("items") {
	case 0:
		doc = append(doc, bson.E{Key: "name", Value: "n"})
		if w.rng.IntN(2) == 0 {
			doc = append(doc, bson.E{Key: "tags", Value: bson.A{"t"}}) // the default then only advances the marker
		}
	case 2:
		doc = append(doc, bson.E{Key: "title", Value: "n"}, bson.E{Key: "tags", Value: bson.A{}})
	case 3:
		doc = append(doc, bson.E{Key: "title", Value: "n"}, bson.E{Key: "tags", Value: bson.A{}}, bson.E{Key: "status", Value: "new"}, bson.E{Key: "rev", Value: 1})
	}
	doc, err := reg.Stamp("items", doc)
	if err != nil {
		w.t.Fatal(err)
	}
	if reg.Current("items") != w.registryAt(w.applied).Current("items") && w.windowClosed() {
		// MongoDB's plain validator refuses it; the sandbox enforces no
		// validator, so the model does.
		w.logf("insert at version %d refused by the closed window", reg.Current("items"))
		return
	}
	if _, err := w.items.InsertOne(w.ctx, doc); err != nil {
		w.t.Fatal(err)
	}
	w.logf("insert _id %d at version %d", w.nextID, reg.Current("items"))
}

// appUpdate sets a field no migration touches; once acknowledged it must
// survive every upgrade, write-back, backfill and downgrade.
func (w *world) appUpdate() {
	if w.nextID == 0 {
		return
	}
	id, note := 1+w.rng.IntN(w.nextID), w.rng.IntN(1000)
	res, err := w.items.UpdateOne(w.ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "note", Value: note}}}})
	if err != nil {
		w.t.Fatal(err)
	}
	if res.MatchedCount == 1 {
		w.notes[id] = note
	}
	w.logf("app update _id %d note %d", id, note)
}

// lazyRead is the current release reading and upgrading a document; the
// write-back comes in a later step.
func (w *world) lazyRead() {
	if w.nextID == 0 {
		return
	}
	id := 1 + w.rng.IntN(w.nextID)
	var stored bson.D
	if err := w.items.FindOne(w.ctx, bson.D{{Key: "_id", Value: id}}).Decode(&stored); errors.Is(err, mongo.ErrNoDocuments) {
		return // its insert was refused
	} else if err != nil {
		w.t.Fatal(err)
	}
	reg := w.registryAt(w.applied)
	up, changed, err := reg.Upgrade("items", stored)
	var tooNew *version.TooNewError
	switch {
	case errors.As(err, &tooNew):
		return
	case err != nil:
		w.t.Fatalf("upgrade _id %d: %v", id, err)
	}
	w.logf("lazy read _id %d (changed %v)", id, changed)
	if changed {
		w.reads = append(w.reads, pendingRead{reg: reg, stored: stored, upgraded: up})
	}
}

func (w *world) writeBack() error {
	if len(w.reads) == 0 {
		return nil
	}
	i := w.rng.IntN(len(w.reads))
	p := w.reads[i]
	w.reads = append(w.reads[:i], w.reads[i+1:]...)
	won, err := p.reg.WriteBack(w.ctx, w.items, p.stored, p.upgraded)
	w.logf("write back _id %v (won %v)", p.stored[0].Value, won)
	return err
}

// backfill runs a backfill; the server-side one lets other actors run
// between its units (the hook) and is sometimes killed there.
func (w *world) backfill(clientSide bool) error {
	if w.applied < 2 {
		return nil // nothing to upgrade yet
	}
	ctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	w.killBackfill = cancel
	defer func() { w.killBackfill = nil }()
	w.logf("backfill (client side %v) starts", clientSide)
	_, err := backfill.Run(ctx, w.runnerAt(w.applied), backfill.Options{Collections: []string{"items"}, ClientSide: clientSide, ServerSide: !clientSide, AssumeNoWriters: !clientSide})
	w.logf("backfill ends: %v", err)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("backfill: %w", err)
	}
	return nil
}

func (w *world) up() error {
	target := min(w.applied+1, 3)
	applied, err := w.runnerAt(target).UpTo(w.ctx, target)
	w.logf("up --to %d: %v", target, err)
	if err != nil {
		return fmt.Errorf("up: %w", err)
	}
	w.applied = target
	w.reads = nil // a new release: the old one's pending reads are gone
	closed := false
	for _, a := range applied.Applied {
		closed = closed || a.Direction == "tighten"
	}
	return w.checkClosedWindow(closed)
}

func (w *world) down() error {
	if w.applied <= 1 {
		return nil
	}
	target := w.applied - 1
	_, err := w.runnerAt(w.applied).DownTo(w.ctx, target)
	w.logf("down --to %d: %v", target, err)
	if errors.Is(err, runner.ErrPartway) {
		// Refused before anything changed: the ledger must say so.
		if v := ledgerVersions(w.t, w.db); len(v) == 0 || v[len(v)-1] != w.applied {
			return fmt.Errorf("a refused down changed the ledger: %v", v)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("down: %w", err)
	}
	w.applied = target
	w.reads = nil
	// Nothing half-done: no document above the target's version.
	top := w.registryAt(target).Current("items")
	n, err := w.items.CountDocuments(w.ctx, bson.D{{Key: "version", Value: bson.D{{Key: "$gt", Value: top}}}})
	if err != nil || n != 0 {
		return fmt.Errorf("down to %d left %d documents above version %d (%v)", target, n, top, err)
	}
	return nil
}

// hook lets other actors run between two units of a server-side backfill,
// and sometimes kills it there.
func (w *world) hook(point string, _ int64, _ int) {
	if point != "backfill.unit" {
		return
	}
	for n := w.rng.IntN(3); n > 0; n-- {
		switch w.rng.IntN(4) {
		case 0:
			w.insertOld()
		case 1:
			w.appUpdate()
		case 2:
			w.lazyRead()
		default:
			_ = w.writeBack()
		}
	}
	if w.killBackfill != nil && w.rng.IntN(4) == 0 {
		w.logf("backfill killed")
		w.killBackfill()
	}
}

func (w *world) logf(format string, a ...any) { w.log = append(w.log, fmt.Sprintf(format, a...)) }

// check verifies the invariants after a step.
func (w *world) check() error {
	cur, err := w.items.Find(w.ctx, bson.D{})
	if err != nil {
		return err
	}
	var docs []bson.M
	if err := cur.All(w.ctx, &docs); err != nil {
		return err
	}
	appliedCV := w.registryAt(w.applied).Current("items")
	for _, d := range docs {
		id := int(d["_id"].(int32))
		if note, ok := w.notes[id]; ok && fmt.Sprint(d["note"]) != strconv.Itoa(note) {
			return fmt.Errorf("_id %d: the acknowledged note %d was lost: %v", id, note, d)
		}
		v := int64(0)
		if x, ok := d["version"]; ok && x != nil {
			v, _ = strconv.ParseInt(fmt.Sprint(x), 10, 64)
		}
		if _, marked := d[version.MarkerField]; marked {
			if v == appliedCV {
				return fmt.Errorf("_id %d: a document at the current version %d carries a step marker: %v", id, v, d)
			}
			continue // partway through a server-side upgrade: any intermediate shape
		}
		if err := shapeOf(v, d); err != nil {
			return fmt.Errorf("_id %d: %w: %v", id, err, d)
		}
	}
	return w.checkClosedWindow(false)
}

// windowClosed reports whether status says the items window is closed.
func (w *world) windowClosed() bool {
	st, err := w.runnerAt(w.applied).Status(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, c := range st.Collections {
		if c.Name == "items" {
			return c.Window == "closed"
		}
	}
	return false
}

// checkClosedWindow: while the window is closed (and when up closes it),
// no document is at another version than the current one.
func (w *world) checkClosedWindow(closedNow bool) error {
	if !closedNow && !w.windowClosed() {
		return nil
	}
	cv := w.registryAt(w.applied).Current("items")
	n, err := w.items.CountDocuments(w.ctx, bson.D{{Key: "version", Value: bson.D{{Key: "$ne", Value: cv}}}})
	if err != nil || n > 0 {
		return fmt.Errorf("up closed the window but %d documents are not at version %d (%v)", n, cv, err)
	}
	return nil
}

// shapeOf checks that a document has the fields of its version: a step
// skipped or misapplied shows here.
func shapeOf(v int64, d bson.M) error {
	has := func(f string) bool { _, ok := d[f]; return ok }
	switch v {
	case 0:
		if !has("name") || has("title") || has("status") {
			return errors.New("not the shape of version 0")
		}
	case 2:
		if !has("title") || !has("tags") || has("name") || has("status") || has("rev") {
			return errors.New("not the shape of version 2")
		}
	case 3:
		if !has("title") || !has("tags") || !has("status") || !has("rev") || has("name") {
			return errors.New("not the shape of version 3 (a step was skipped)")
		}
	default:
		return fmt.Errorf("version %d is no version of items", v)
	}
	return nil
}
