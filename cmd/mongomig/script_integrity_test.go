package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/testhook"
	"github.com/mongomig/mongomig/pkg/integrity"
	"github.com/mongomig/mongomig/pkg/migration"
)

// integrityPrograms are the programs the integrity scripts run besides
// mongomig (testscript.Main puts them on PATH), each against the database
// $MONGOMIG_URI names:
//
//	integrityapp propagate SOURCE ID [KILL]
//	    the application's integrity.Propagate after it changed document ID
//	    (Extended JSON) of SOURCE, with the rules of ./migrations, in
//	    batches of 5; with KILL, the process kills itself (SIGKILL) before
//	    batch KILL (from 0) of its first rule: a propagation killed midway
//	integrityapp update COLL FILTER UPDATE    one updateMany, as the application
//	integrityapp delete COLL FILTER           one deleteMany
//	integrityapp students N                   students 1..N, each taking math at 3 credits
//	integrityapp disjoint COLL FILE...
//	    read the `repair --json` reports FILE...: fail unless each fixed
//	    some document of COLL and no document was fixed by two of them
//	integrityapp writer COLL FIELD FROM TO STOPFILE
//	    another writer: $inc FIELD of the documents _id FROM..TO in turn,
//	    one acknowledged write at a time, a millisecond apart, until
//	    STOPFILE exists (and at least 20 writes); then reads them back and fails unless their
//	    FIELD sums to the writes acknowledged ("N writes, none lost")
//	mongomig-at POINT N ACTION [ARGS] -- MONGOMIG_ARGS...
//	    mongomig MONGOMIG_ARGS with a hook at its checkers' point POINT
//	    ("integrity.write students": before a repair's first attempt to
//	    write a fix of a student), from the Nth time (from 0) on:
//	    kill              the process kills itself (SIGKILL), the Nth time
//	                      ("integrity.flush students": before a bulk of fixes;
//	                      "integrity.check comments": as a check counts a
//	                      value out of line of a comment)
//	    comment POST      the Nth time, the application adds a comment to
//	                      post POST and $inc's its commentCount
//	    edit COLL ID      every time, $inc edits of document ID of COLL
var integrityPrograms = map[string]func(){
	"integrityapp": integrityApp,
	"mongomig-at":  mongomigAt,
}

func appDB() (*mongo.Database, func()) {
	uri := os.Getenv("MONGOMIG_URI")
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		fail("connect: %v", err)
	}
	return client.Database(scriptDBName(uri)), func() { _ = client.Disconnect(context.Background()) }
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

// extJSON parses an Extended JSON value ("b", 2) or document.
func extJSON(s string) any {
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(`{"v":`+s+`}`), false, &d); err != nil {
		fail("%s: %v", s, err)
	}
	return d[0].Value
}

func killSelf() {
	p, _ := os.FindProcess(os.Getpid())
	_ = p.Kill()
	time.Sleep(time.Minute) // the kill lands first
}

func integrityApp() {
	args := os.Args[1:]
	if len(args) == 0 {
		fail("usage: integrityapp propagate|update|delete|writer ...")
	}
	db, done := appDB()
	defer done()
	ctx := context.Background()
	var err error
	switch {
	case args[0] == "propagate" && (len(args) == 3 || len(args) == 4):
		err = propagateApp(ctx, db, args[1], extJSON(args[2]), args[3:])
	case args[0] == "update" && len(args) == 4:
		var res *mongo.UpdateResult
		if res, err = db.Collection(args[1]).UpdateMany(ctx, extJSON(args[2]), extJSON(args[3])); err == nil {
			fmt.Printf("%d modified\n", res.ModifiedCount)
		}
	case args[0] == "delete" && len(args) == 3:
		var res *mongo.DeleteResult
		if res, err = db.Collection(args[1]).DeleteMany(ctx, extJSON(args[2])); err == nil {
			fmt.Printf("%d deleted\n", res.DeletedCount)
		}
	case args[0] == "students" && len(args) == 2:
		err = seedStudents(ctx, db, atoi(args[1]))
	case args[0] == "disjoint" && len(args) >= 3:
		err = disjointFixes(args[1], args[2:])
	case args[0] == "writer" && len(args) == 6:
		err = writerApp(ctx, db.Collection(args[1]), args[2], atoi(args[3]), atoi(args[4]), args[5])
	default:
		fail("integrityapp %v: unknown command or wrong arguments", args)
	}
	if err != nil {
		fail("integrityapp %s: %v", args[0], err)
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fail("%s: %v", s, err)
	}
	return n
}

func propagateApp(ctx context.Context, db *mongo.Database, source string, id any, kill []string) error {
	ms, err := migration.Load(os.DirFS("migrations"))
	if err != nil {
		return err
	}
	c, err := integrity.New(db, ms, integrity.Options{BatchSize: 5})
	if err != nil {
		return err
	}
	if len(kill) == 1 {
		at, first := atoi(kill[0]), ""
		testhook.Set(c, func(point string, _ int64, batch int) {
			if first == "" {
				first = point
			}
			if point == first && batch == at {
				killSelf()
			}
		})
	}
	ps, err := c.Propagate(ctx, source, id)
	for _, p := range ps {
		fmt.Printf("%s: %d modified (%s)\n", p.Rule, p.Modified, p.Method)
	}
	if len(ps) == 0 && err == nil {
		fmt.Println("no mirror copies of", source)
	}
	return err
}

func writerApp(ctx context.Context, coll *mongo.Collection, field string, from, to int, stop string) error {
	n := 0
	for ; n < 20 || !exists(stop); n++ {
		id := from + n%(to-from+1)
		if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$inc", Value: bson.D{{Key: field, Value: 1}}}}); err != nil {
			return err
		}
		time.Sleep(time.Millisecond) // a writer, not a load generator
	}
	cur, err := coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: from}, {Key: "$lte", Value: to}}}})
	if err != nil {
		return err
	}
	var docs []bson.M
	if err := cur.All(ctx, &docs); err != nil {
		return err
	}
	sum := int64(0)
	for _, d := range docs {
		switch v := d[field].(type) {
		case int32:
			sum += int64(v)
		case int64:
			sum += v
		}
	}
	if sum != int64(n) {
		return fmt.Errorf("%d writes acknowledged, %s sums to %d: a write was lost", n, field, sum)
	}
	fmt.Printf("%d writes, none lost\n", n)
	return nil
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// mongomigAt runs mongomig with a process-wide integrity hook.
func mongomigAt() {
	args := os.Args[1:]
	sep := -1
	for i, a := range args {
		if a == "--" {
			sep = i
			break
		}
	}
	if sep < 3 {
		fail("usage: mongomig-at POINT N ACTION [ARGS] -- MONGOMIG_ARGS...")
	}
	point, from, action, rest := args[0], atoi(args[1]), args[2], args[3:sep]
	db, done := appDB()
	defer done()
	ctx := context.Background()
	seen := 0
	var mu sync.Mutex // the hook runs in each repair worker
	testhook.Set(integrity.ProcessHook, func(p string, _ int64, attempt int) {
		if p != point || (attempt > 0 && strings.HasPrefix(p, "integrity.write ")) {
			return // a write's re-checked attempts are not counted
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen-1 < from {
			return
		}
		var err error
		switch {
		case action == "kill" && seen-1 == from:
			killSelf()
		case action == "comment" && len(rest) == 1 && seen-1 == from:
			post := extJSON(rest[0])
			if _, err = db.Collection("comments").InsertOne(ctx, bson.D{{Key: "postId", Value: post}}); err == nil {
				_, err = db.Collection("posts").UpdateOne(ctx, bson.D{{Key: "_id", Value: post}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "commentCount", Value: 1}}}})
			}
		case action == "edit" && len(rest) == 2:
			_, err = db.Collection(rest[0]).UpdateOne(ctx, bson.D{{Key: "_id", Value: extJSON(rest[1])}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "edits", Value: 1}}}})
		}
		if err != nil {
			fail("mongomig-at %s: %v", action, err)
		}
	})
	os.Args = append([]string{"mongomig"}, args[sep+1:]...)
	main()
}

func seedStudents(ctx context.Context, db *mongo.Database, n int) error {
	docs := make([]any, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i + 1}, {Key: "classes", Value: bson.A{
			bson.D{{Key: "_id", Value: "math"}, {Key: "name", Value: "Math"}, {Key: "credits", Value: 3}}}}}
	}
	_, err := db.Collection("students").InsertMany(ctx, docs)
	return err
}

func disjointFixes(coll string, files []string) error {
	by := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var rep struct {
			Fixes []struct {
				Collection string          `json:"collection"`
				ID         json.RawMessage `json:"_id"`
				Outcome    string          `json:"outcome"`
			} `json:"fixes"`
		}
		if err := json.Unmarshal(data, &rep); err != nil {
			return fmt.Errorf("%s: %v", f, err)
		}
		n := 0
		for _, fx := range rep.Fixes {
			if fx.Collection != coll || fx.Outcome != integrity.OutcomeFixed {
				continue
			}
			if other, ok := by[string(fx.ID)]; ok {
				return fmt.Errorf("%s _id %s fixed by both %s and %s", coll, fx.ID, other, f)
			}
			by[string(fx.ID)] = f
			n++
		}
		if n == 0 {
			return fmt.Errorf("%s fixed no document of %s: the work was not split", f, coll)
		}
		fmt.Printf("%s: %d fixed\n", f, n)
	}
	fmt.Printf("%d fixed, none by two repairs\n", len(by))
	return nil
}
