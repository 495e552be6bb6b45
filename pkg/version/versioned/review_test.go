package versioned_test

import (
	"context"
	"sync"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/version"
	"github.com/mongomig/mongomig/pkg/version/versioned"
)

// TestProjectedReadsAreNotWrittenBack: a document read with a projection
// lacks the fields the projection left out, so its upgrade is not the
// stored document's upgrade (a rename or func of a field it does not hold
// is a no-op). Writing that back stamped the stored document current with
// the left-out fields never upgraded: Alan's name stayed a string at
// version 3, with either write-back policy, through FindOne and Find.
func TestProjectedReadsAreNotWrittenBack(t *testing.T) {
	ctx := context.Background()
	reg := registry(t)
	proj := bson.D{{Key: "status", Value: 1}, {Key: "version", Value: 1}}
	for _, p := range []versioned.Policy{versioned.Sync, versioned.Deferred} {
		raw := database(t, nil).Collection("users")
		ids := newIDs()
		docs := mixed(ids)
		if _, err := raw.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
		users := versioned.New(raw, reg, versioned.WithWriteBack(p))
		var d bson.D
		if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: ids[1]}}, options.FindOne().SetProjection(proj)).Decode(&d); err != nil {
			t.Fatal(err)
		}
		cur, err := users.Find(ctx, bson.D{}, options.Find().SetProjection(proj))
		if err != nil {
			t.Fatal(err)
		}
		var all []bson.D
		if err := cur.All(ctx, &all); err != nil || len(all) != 4 {
			t.Fatal(len(all), err)
		}
		if err := users.Close(ctx); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			if got := storedD(t, raw, id); !sameFields(got, docs[i].(bson.D)) {
				t.Errorf("%s: a projected read changed version %d's document to %v", p, i, got)
			}
		}
		if s := users.Stats(); s.Written != 0 || s.Upgraded == 0 {
			t.Errorf("%s: stats %+v", p, s)
		}
	}
}

// TestFindOneAndUpdateBeforeIsNotWrittenBack: FindOneAndUpdate returns the
// document as it was before the update unless ReturnDocument is After (the
// driver's default is Before). Its upgrade used to be the upgrade of a
// document the server no longer held: a copy step read the old source,
// and the guarded delta matched, storing the old email as the copy of the
// new one. The wrapper upgrades the document and
// writes it back before the update, whatever ReturnDocument says: the
// copy is taken from the email as it was when the document was upgraded
// (login keeps the old address, as if a backfill had run first), and the
// update then changes email alone.
func TestFindOneAndUpdateBeforeIsNotWrittenBack(t *testing.T) {
	ctx := context.Background()
	raw := database(t, nil).Collection("accounts")
	reg, err := version.New(fstest.MapFS{"0001_login.yaml": {Data: []byte(`collections:
  accounts:
    upgrade:
      - copy: {email: login}
`)}})
	if err != nil {
		t.Fatal(err)
	}
	id := bson.NewObjectID()
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "email", Value: "new@example.com"}}}}
	upgradedFirst := bson.D{{Key: "_id", Value: id}, {Key: "email", Value: "new@example.com"}, {Key: "login", Value: "old@example.com"}, {Key: "version", Value: int32(1)}}
	for _, tc := range []struct {
		name string
		opts *options.FindOneAndUpdateOptionsBuilder
		want bson.D // stored afterwards
	}{
		{"default (before)", options.FindOneAndUpdate(), upgradedFirst},
		{"before", options.FindOneAndUpdate().SetReturnDocument(options.Before), upgradedFirst},
		{"after", options.FindOneAndUpdate().SetReturnDocument(options.After), upgradedFirst},
	} {
		if _, err := raw.DeleteMany(ctx, bson.D{}); err != nil {
			t.Fatal(err)
		}
		if _, err := raw.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "email", Value: "old@example.com"}}); err != nil {
			t.Fatal(err)
		}
		accounts := versioned.New(raw, reg, versioned.WithWriteBack(versioned.Sync))
		var got bson.D
		if err := accounts.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: id}}, set, tc.opts).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if stored := storedD(t, raw, id); !sameFields(stored, tc.want) {
			t.Errorf("%s: stored %v, want %v", tc.name, stored, tc.want)
		}
	}
}

// TestDeferredKeepsTheLatestReadOfADocument: a document read twice before
// a flush is written back once, from the later read. The queue kept the
// first: another writer's change between the two reads made that one lose,
// and the later one, which would have won, was dropped as a duplicate.
func TestDeferredKeepsTheLatestReadOfADocument(t *testing.T) {
	ctx := context.Background()
	raw := database(t, nil).Collection("users")
	ids := newIDs()
	if _, err := raw.InsertOne(ctx, mixed(ids)[0]); err != nil {
		t.Fatal(err)
	}
	users := versioned.New(raw, registry(t), versioned.WithDeferred(versioned.DeferredOptions{Interval: -1}))
	byID := bson.D{{Key: "_id", Value: ids[0]}}
	var u User
	if err := users.FindOne(ctx, byID).Decode(&u); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.UpdateOne(ctx, byID, bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: "suspended"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := users.FindOne(ctx, byID).Decode(&u); err != nil || u.Status != "suspended" {
		t.Fatal(u, err)
	}
	if err := users.Close(ctx); err != nil {
		t.Fatal(err)
	}
	d := storedD(t, raw, ids[0])
	if lookup(d, "version") != int32(3) || lookup(d, "status") != "suspended" {
		t.Errorf("stored %v, want the later read's upgrade", d)
	}
	if s := users.Stats(); s.Queued != 2 || s.Coalesced != 1 || s.Written != 1 || s.Lost != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestDeferredCloseRacingReads: reads racing Close never panic, and every
// upgrade is accounted for once: queued or dropped; and once Close has
// returned, every queued write-back is written, lost, failed or coalesced
// (run with -race).
func TestDeferredCloseRacingReads(t *testing.T) {
	ctx := context.Background()
	raw := database(t, nil).Collection("users")
	var docs []any
	var ids []bson.ObjectID
	for i := 0; i < 8; i++ {
		id := bson.NewObjectID()
		ids = append(ids, id)
		docs = append(docs, bson.D{{Key: "_id", Value: id}, {Key: "name", Value: "A B"}, {Key: "email", Value: "e"}})
	}
	if _, err := raw.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	users := versioned.New(raw, registry(t), versioned.WithDeferred(versioned.DeferredOptions{Batch: 3, Interval: -1, Queue: 4}))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; i < 12; i++ {
				var u User
				if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: ids[(g+i)%len(ids)]}}).Decode(&u); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	close(start)
	closed := make(chan error, 2)
	go func() { closed <- users.Close(ctx) }()
	go func() { closed <- users.Close(ctx) }()
	for i := 0; i < 2; i++ {
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
	}
	s := users.Stats()
	if s.Written+s.Lost+s.Failed+s.Coalesced != s.Queued {
		t.Errorf("after Close: %d queued, but %d written, %d lost, %d failed, %d coalesced", s.Queued, s.Written, s.Lost, s.Failed, s.Coalesced)
	}
	wg.Wait()
	s = users.Stats()
	if s.Queued+s.Dropped != s.Upgraded {
		t.Errorf("%d upgrades, %d queued, %d dropped", s.Upgraded, s.Queued, s.Dropped)
	}
}

// TestDecodeTargets: an upgraded document decodes the same into bson.M,
// bson.D, bson.Raw and a struct through FindOne, a cursor's Next and All,
// and Collection.Decode; a non-pointer is an error, never a panic.
func TestDecodeTargets(t *testing.T) {
	ctx := context.Background()
	raw := database(t, nil).Collection("users")
	ids := newIDs()
	if _, err := raw.InsertOne(ctx, mixed(ids)[0]); err != nil {
		t.Fatal(err)
	}
	users := versioned.New(raw, registry(t))
	byID := bson.D{{Key: "_id", Value: ids[0]}}
	stored, err := raw.FindOne(ctx, byID).Raw()
	if err != nil {
		t.Fatal(err)
	}
	type decoder struct {
		name   string
		decode func(v any) error
	}
	decoders := []decoder{
		{"FindOne", func(v any) error { return users.FindOne(ctx, byID).Decode(v) }},
		{"Cursor.Next", func(v any) error {
			cur, err := users.Find(ctx, byID)
			if err != nil {
				return err
			}
			defer cur.Close(ctx)
			if !cur.Next(ctx) {
				t.Fatal("no document", cur.Err())
			}
			return cur.Decode(v)
		}},
		{"Decode", func(v any) error { return users.Decode(ctx, stored, v) }},
	}
	want := `{"_id":{"$oid":"` + ids[0].Hex() + `"},"name":{"first":"Ada","last":"Lovelace"},"contact":{"email":"ada@example.com"},"status":"active","plan":"free","version":3}`
	for _, d := range decoders {
		var m bson.M
		var dd bson.D
		var r bson.Raw
		var u User
		for _, v := range []any{&m, &dd, &r, &u} {
			if err := d.decode(v); err != nil {
				t.Errorf("%s into %T: %v", d.name, v, err)
			}
		}
		if got := js(dd); got != want {
			t.Errorf("%s into bson.D: %s, want %s", d.name, got, want)
		}
		var fromRaw, fromM bson.D
		_ = bson.Unmarshal(r, &fromRaw)
		b, _ := bson.Marshal(m)
		_ = bson.Unmarshal(b, &fromM)
		if js(fromRaw) != want || len(fromM) != len(dd) || u.Plan != "free" || u.Name.First != "Ada" {
			t.Errorf("%s: raw %s, bson.M %v, struct %+v", d.name, js(fromRaw), m, u)
		}
		if err := d.decode(User{}); err == nil {
			t.Errorf("%s into a non-pointer: no error", d.name)
		}
	}
	cur, err := users.Find(ctx, byID)
	if err != nil {
		t.Fatal(err)
	}
	var all []bson.D
	if err := cur.All(ctx, &all); err != nil || len(all) != 1 || js(all[0]) != want {
		t.Errorf("All: %v, %v", all, err)
	}
	cur, err = users.Find(ctx, byID)
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx, all); err == nil {
		t.Error("All into a slice, not a pointer to one: no error")
	}
}

func js(d bson.D) string {
	b, err := bson.MarshalExtJSON(d, false, false)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// TestFindOneAndUpdateUpsertIsStamped: a document FindOneAndUpdate
// inserts (upsert) is written by this application, so it is at the
// current version. It was stored without the version field, so every
// read took it for version 0 and ran every upgrade on it: the set step
// replaced the plan the application had just written.
func TestFindOneAndUpdateUpsertIsStamped(t *testing.T) {
	ctx := context.Background()
	reg, err := version.New(fstest.MapFS{"0001_plan.yaml": {Data: []byte(`collections:
  accounts:
    upgrade:
      - set: {plan: free}
`)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, update := range []any{
		bson.D{{Key: "$set", Value: bson.D{{Key: "plan", Value: "pro"}}}},
		bson.M{"$set": bson.M{"plan": "pro"}, "$setOnInsert": bson.M{"since": int32(2024)}},
		// An update that sets the version itself is sent as it is ($set
		// and $setOnInsert of one path conflict).
		bson.D{{Key: "$set", Value: bson.D{{Key: "plan", Value: "pro"}, {Key: "version", Value: int32(1)}}}},
	} {
		raw := database(t, nil).Collection("accounts")
		accounts := versioned.New(raw, reg, versioned.WithWriteBack(versioned.Sync))
		id := bson.NewObjectID()
		var got bson.D
		opts := options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)
		if err := accounts.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: id}}, update, opts).Decode(&got); err != nil {
			t.Fatal(err)
		}
		stored := storedD(t, raw, id)
		if lookup(got, "plan") != "pro" || lookup(stored, "plan") != "pro" || lookup(stored, "version") != int32(1) {
			t.Errorf("%v: read %v, stored %v", update, got, stored)
		}
		if _, ok := update.(bson.M); ok && lookup(stored, "since") != int32(2024) {
			t.Errorf("the application's $setOnInsert was lost: %v", stored)
		}
	}
}

// TestNilOptions: a nil options builder, which the driver skips, does
// not panic the wrapper, which reads the options first.
func TestNilOptions(t *testing.T) {
	ctx := context.Background()
	raw := database(t, nil).Collection("users")
	users := versioned.New(raw, registry(t))
	var one *options.FindOneOptionsBuilder
	var many *options.FindOptionsBuilder
	var upd *options.FindOneAndUpdateOptionsBuilder
	if err := users.FindOne(ctx, bson.D{}, one).Err(); err != mongo.ErrNoDocuments {
		t.Errorf("FindOne: %v", err)
	}
	if _, err := users.Find(ctx, bson.D{}, many); err != nil {
		t.Errorf("Find: %v", err)
	}
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}
	if err := users.FindOneAndUpdate(ctx, bson.D{}, set, upd).Err(); err != mongo.ErrNoDocuments {
		t.Errorf("FindOneAndUpdate: %v", err)
	}
}

// TestStampOverridesTheStructsVersion: a struct's own version field (a
// stale value, omitempty and zero, the wrong type) is replaced by the
// current version, once, and reads back as it.
func TestStampOverridesTheStructsVersion(t *testing.T) {
	ctx := context.Background()
	raw := database(t, nil).Collection("users")
	users := versioned.New(raw, registry(t))
	type stale struct {
		ID      bson.ObjectID `bson:"_id"`
		Name    Name          `bson:"name"`
		Version int           `bson:"version"`
	}
	type omitted struct {
		ID      bson.ObjectID `bson:"_id"`
		Name    Name          `bson:"name"`
		Version int64         `bson:"version,omitempty"`
	}
	type text struct {
		ID      bson.ObjectID `bson:"_id"`
		Name    Name          `bson:"name"`
		Version string        `bson:"version"`
	}
	docs := []any{
		stale{bson.NewObjectID(), Name{"A", "B"}, 1},
		omitted{ID: bson.NewObjectID(), Name: Name{"C", "D"}},
		text{bson.NewObjectID(), Name{"E", "F"}, "v1"},
	}
	if _, err := users.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		id := reflectID(d)
		got := storedD(t, raw, id)
		n := 0
		for _, e := range got {
			if e.Key == "version" {
				n++
			}
		}
		if n != 1 || lookup(got, "version") != int32(3) {
			t.Errorf("%T stored as %v", d, got)
		}
		var back omitted
		if err := users.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&back); err != nil || back.Version != 3 {
			t.Errorf("%T read back %+v, %v", d, back, err)
		}
	}
}

func reflectID(d any) bson.ObjectID {
	b, _ := bson.Marshal(d)
	return bson.Raw(b).Lookup("_id").ObjectID()
}

// TestWriteBackLosesToAWriterOfWhatTheUpgradeRead: another writer's
// update lands between the read and its write-back on a field the upgrade
// read but left alone: the source of a copy, or a field a rename should
// have moved, absent at the read. The write-back used to win (DeltaOf
// guards only the fields it writes): it stored the copy of the old email
// beside the new one, or stamped version 3 with the new email never
// renamed. Both policies.
func TestWriteBackLosesToAWriterOfWhatTheUpgradeRead(t *testing.T) {
	accounts, err := version.New(fstest.MapFS{"0001_login.yaml": {Data: []byte("collections:\n  accounts:\n    upgrade:\n      - copy: {email: login}\n")}})
	if err != nil {
		t.Fatal(err)
	}
	setEmail := bson.D{{Key: "$set", Value: bson.D{{Key: "email", Value: "new@x"}}}}
	for _, policy := range []versioned.Policy{versioned.Sync, versioned.Deferred} {
		for _, tc := range []struct {
			name, coll string
			reg        *version.Registry
			doc        bson.D
			want       func(d bson.D) bool
		}{
			{"copy source changed", "accounts", accounts, bson.D{{Key: "email", Value: "old@x"}},
				func(d bson.D) bool { return lookup(d, "login") == nil && lookup(d, "version") == nil }},
			{"rename source added", "users", registry(t), bson.D{{Key: "name", Value: "Ada Lovelace"}},
				func(d bson.D) bool { return lookup(d, "version") == nil && lookup(d, "email") == "new@x" }},
		} {
			t.Run(policy.String()+"/"+tc.name, func(t *testing.T) {
				ctx := context.Background()
				raw := database(t, nil).Collection(tc.coll)
				id := bson.NewObjectID()
				if _, err := raw.InsertOne(ctx, append(bson.D{{Key: "_id", Value: id}}, tc.doc...)); err != nil {
					t.Fatal(err)
				}
				w := &writer{coll: raw, update: setEmail}
				c := versioned.New(raw, tc.reg, versioned.WithWriteBack(policy), versioned.WithObserver(w.observe))
				var d bson.D
				if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
					t.Fatal(err)
				}
				if err := c.Close(ctx); err != nil || w.err != nil {
					t.Fatal(err, w.err)
				}
				if got := storedD(t, raw, id); !tc.want(got) {
					t.Errorf("stored %v: the write-back applied an upgrade of what the document no longer holds", got)
				}
				if s := c.Stats(); s.Written != 0 || s.Lost != 1 {
					t.Errorf("stats %+v", s)
				}
			})
		}
	}
}
