package versioned_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

// migrations take users from version 0, {name: "Ada Lovelace", email,
// legacy}, to version 3, {name: {first, last}, contact: {email}, status,
// plan}; a Go step splits the name.
var migrations = fstest.MapFS{
	"0001_contact.yaml": {Data: []byte(`collections:
  users:
    upgrade:
      - rename: {email: contact.email}
      - default: {status: active}
`)},
	"0002_split_name.yaml": {Data: []byte(`collections:
  users:
    upgrade:
      - func: splitName
`)},
	"0003_plan.yaml": {Data: []byte(`collections:
  users:
    validator:
      $jsonSchema:
        bsonType: object
        required: [name, status, plan]
        properties:
          status: {enum: [active, suspended]}
          plan: {enum: [free, pro]}
    upgrade:
      - default: {plan: free}
      - unset: [legacy]
`)},
}

func splitName(doc bson.D) (bson.D, error) {
	for i, e := range doc {
		if e.Key != "name" {
			continue
		}
		switch name := e.Value.(type) {
		case bson.D:
			return doc, nil
		case string:
			first, last, _ := strings.Cut(name, " ")
			doc[i].Value = bson.D{{Key: "first", Value: first}, {Key: "last", Value: last}}
			return doc, nil
		default:
			return nil, fmt.Errorf("name is a %T", name)
		}
	}
	return doc, nil
}

func registry(t testing.TB) *version.Registry {
	t.Helper()
	reg, err := version.New(migrations, version.WithFunc("splitName", splitName))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// User is a users document at version 3.
type User struct {
	ID      bson.ObjectID `bson:"_id"`
	Name    Name          `bson:"name"`
	Contact Contact       `bson:"contact,omitempty"`
	Status  string        `bson:"status"`
	Plan    string        `bson:"plan"`
}

type Name struct {
	First string `bson:"first"`
	Last  string `bson:"last"`
}

type Contact struct {
	Email string `bson:"email,omitempty"`
}

// stored documents of every version, one user each.
func mixed(ids [4]bson.ObjectID) []any {
	return []any{
		bson.D{{Key: "_id", Value: ids[0]}, {Key: "name", Value: "Ada Lovelace"}, {Key: "email", Value: "ada@example.com"}, {Key: "legacy", Value: true}},
		bson.D{{Key: "_id", Value: ids[1]}, {Key: "name", Value: "Alan Turing"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "alan@example.com"}}}, {Key: "status", Value: "suspended"}, {Key: "version", Value: int32(1)}},
		bson.D{{Key: "_id", Value: ids[2]}, {Key: "name", Value: bson.D{{Key: "first", Value: "Grace"}, {Key: "last", Value: "Hopper"}}}, {Key: "status", Value: "active"}, {Key: "legacy", Value: 1}, {Key: "version", Value: int32(2)}},
		bson.D{{Key: "_id", Value: ids[3]}, {Key: "name", Value: bson.D{{Key: "first", Value: "Edsger"}, {Key: "last", Value: "Dijkstra"}}}, {Key: "status", Value: "active"}, {Key: "plan", Value: "pro"}, {Key: "version", Value: int32(3)}},
	}
}

func newIDs() (ids [4]bson.ObjectID) {
	for i := range ids {
		ids[i] = bson.NewObjectID()
	}
	return ids
}

// recorder counts the commands a client starts, by name.
type recorder struct {
	mu   sync.Mutex
	cmds map[string]int
	docs []bson.Raw
}

func (r *recorder) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.cmds == nil {
			r.cmds = map[string]int{}
		}
		r.cmds[e.CommandName]++
		if e.CommandName == "update" {
			r.docs = append(r.docs, append(bson.Raw(nil), e.Command...))
		}
	}}
}

func (r *recorder) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cmds[name]
}

// database is a fresh sandbox database; rec (if any) sees its commands.
func database(t *testing.T, rec *recorder) *mongo.Database {
	t.Helper()
	srv := sandboxtest.Start(t)
	opts := options.Client()
	if rec != nil {
		opts.SetMonitor(rec.monitor())
	}
	return sandboxtest.Connect(t, srv.URI(), opts).Database("app")
}

// storedD reads a document as the server holds it, bypassing the wrapper.
func storedD(t *testing.T, coll *mongo.Collection, id bson.ObjectID) bson.D {
	t.Helper()
	var d bson.D
	if err := coll.FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		t.Fatalf("read %s as stored: %v", id.Hex(), err)
	}
	return d
}

func lookup(d bson.D, key string) any {
	for _, e := range d {
		if e.Key == key {
			return e.Value
		}
	}
	return nil
}
