package version_test

import (
	"errors"
	"fmt"
	"strings"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/version"
)

// In an application the migrations are embedded:
//
//	//go:embed migrations/*.yaml
//	var files embed.FS
//	sub, _ := fs.Sub(files, "migrations")
//
// Here a MapFS holds the same kind of files. docs/lazy-upgrades.md walks
// through a whole application (examples/lazyapp) against a server.
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

// Example shows what an application does with a registry, without a
// server: upgrade what it reads, compute the guarded write-back, stamp what
// it inserts, and refuse a document newer than the build.
func Example() {
	// Once, at start-up: the registry, with the Go functions of func steps.
	reg, err := version.New(appMigrations, version.WithFunc("splitName", splitFullName))
	if err != nil {
		panic(err) // an invalid file or an unregistered func: fail at start-up
	}
	fmt.Println("users are at version", reg.Current("users"))

	// A document as read, written before mongomig: no version field.
	stored := bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "Ada Lovelace"}, {Key: "email", Value: "ada@example.com"}}
	upgraded, changed, err := reg.Upgrade("users", stored)
	if err != nil {
		panic(err)
	}
	fmt.Println("upgraded:", changed, show(upgraded))

	// The guarded update reg.WriteBack(ctx, coll, stored, upgraded) sends.
	delta, _ := version.DeltaOf(stored, upgraded)
	fmt.Println("filter:", show(delta.Filter))
	fmt.Println("update:", show(delta.Update))

	// On insert: stamp new documents with the current version.
	// A collection no migration names is an error (a typo, say).
	fresh, err := reg.Stamp("users", bson.D{{Key: "_id", Value: 2}, {Key: "name", Value: bson.D{{Key: "first", Value: "Grace"}, {Key: "last", Value: "Hopper"}}}})
	if err != nil {
		panic(err) // version.ErrUnknownCollection
	}
	fmt.Println("stamped:", show(fresh))

	// A document a newer release wrote.
	_, _, err = reg.Upgrade("users", bson.D{{Key: "_id", Value: 3}, {Key: "version", Value: 3}})
	var tooNew *version.TooNewError
	fmt.Println("too new:", errors.As(err, &tooNew))

	// Output:
	// users are at version 2
	// upgraded: true {"_id":1,"name":{"first":"Ada","last":"Lovelace"},"contact":{"email":"ada@example.com"},"status":"active","version":2}
	// filter: {"_id":1,"name":{"$eq":"Ada Lovelace","$not":{"$type":"array"}},"contact":{"$exists":false},"status":{"$exists":false},"version":{"$exists":false},"email":{"$eq":"ada@example.com","$not":{"$type":"array"}},"_mongomig_step":{"$exists":false}}
	// update: {"$set":{"name":{"first":"Ada","last":"Lovelace"},"contact":{"email":"ada@example.com"},"status":"active","version":2},"$unset":{"email":""}}
	// stamped: {"_id":2,"name":{"first":"Grace","last":"Hopper"},"version":2}
	// too new: true
}

func show(d bson.D) string {
	b, _ := bson.MarshalExtJSON(d, false, false)
	return string(b)
}
