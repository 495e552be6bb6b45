package version_test

import (
	"context"
	"fmt"
	"strings"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox"
	"github.com/mongomig/mongomig/pkg/version"
)

// In an application the migrations are embedded:
//
//	//go:embed migrations/*.yaml
//	var files embed.FS
//	sub, _ := fs.Sub(files, "migrations")
//
// Here a MapFS holds the same kind of files.
var appMigrations = fstest.MapFS{
	"0001_users.yaml": {Data: []byte(`collections:
  users:
    upgrade:
      - rename: {email: contact.email}
      - default: {status: active}
`)},
	"0002_names.yaml": {Data: []byte(`collections:
  users:
    upgrade:
      - func: splitName
`)},
}

func splitFullName(d bson.D) (bson.D, error) {
	for i, e := range d {
		if s, ok := e.Value.(string); ok && e.Key == "name" {
			first, last, _ := strings.Cut(s, " ")
			d[i].Value = bson.D{{Key: "first", Value: first}, {Key: "last", Value: last}}
		}
	}
	return d, nil
}

// Example walks through what an application does: build the registry once,
// upgrade what it reads, stamp what it inserts, and optionally write the
// upgrade back without clobbering a concurrent writer.
func Example() {
	ctx := context.Background()
	// A server to read from (the embedded sandbox stands in for MongoDB).
	srv, _ := sandbox.Start(sandbox.Options{})
	defer srv.Stop(ctx)
	client, _ := mongo.Connect(options.Client().ApplyURI(srv.URI()))
	defer client.Disconnect(ctx)
	users := client.Database("app").Collection("users")

	// 1. Once, at start-up: the registry, with the Go functions of func steps.
	reg, err := version.New(appMigrations, version.WithFunc("splitName", splitFullName))
	if err != nil {
		panic(err) // an invalid file or an unregistered func: fail at start-up
	}
	fmt.Println("users are at version", reg.Current("users"))

	// A document written before mongomig: no version field.
	_, _ = users.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "Ada Lovelace"}, {Key: "email", Value: "ada@example.com"}})

	// 2. On every read: upgrade. A current document costs one field lookup.
	var stored bson.D
	_ = users.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&stored)
	doc, changed, err := reg.Upgrade("users", stored)
	if err != nil {
		panic(err) // e.g. *version.TooNewError: the data is newer than this build
	}
	fmt.Println("upgraded:", changed, show(doc))

	// 3. Optionally, persist it: only the changed fields, guarded on their
	// old values. won is false if someone changed them meanwhile.
	won, err := reg.WriteBack(ctx, users, stored, doc)
	fmt.Println("written back:", won, err)

	// 4. On insert: stamp new documents with the current version. A
	// collection no migration names is an error (a typo, say).
	fresh, err := reg.Stamp("users", bson.D{{Key: "_id", Value: 2}, {Key: "name", Value: bson.D{{Key: "first", Value: "Grace"}, {Key: "last", Value: "Hopper"}}}})
	if err != nil {
		panic(err) // version.ErrUnknownCollection
	}
	_, _ = users.InsertOne(ctx, fresh)
	fmt.Println("stamped:", show(fresh))

	// Output:
	// users are at version 2
	// upgraded: true {"_id":1,"name":{"first":"Ada","last":"Lovelace"},"contact":{"email":"ada@example.com"},"status":"active","version":2}
	// written back: true <nil>
	// stamped: {"_id":2,"name":{"first":"Grace","last":"Hopper"},"version":2}
}

func show(d bson.D) string {
	b, _ := bson.MarshalExtJSON(d, false, false)
	return string(b)
}
