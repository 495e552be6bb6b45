// Command releaseapp is the smallest application that announces its
// release: it builds its registry from a migration directory, announces
// the release (the versions it knows of each collection) with a
// heartbeat, and gates its write-backs on the announcement, so that
// mongomig's backfill, the application's own write-backs and `up`'s
// closing of a validator window hold while an older release still runs.
// docs/lazy-upgrades.md quotes it; the script test of docs/deploying.md
// runs two of its builds side by side as the two releases of a rolling
// deploy.
//
//	releaseapp -uri mongodb://localhost:27017/app -dir migrations -release 2.0 serve
//	releaseapp -uri mongodb://localhost:27017/app -dir migrations insert '{"name": "Ada"}'
//
// serve announces the release, prints one line, and runs until SIGINT or
// SIGTERM, then closes the announcement. insert stamps a users document
// with the version this release knows and inserts it (what a pod of this
// release writes).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"github.com/mongomig/mongomig/pkg/release"
	"github.com/mongomig/mongomig/pkg/version"
	"github.com/mongomig/mongomig/pkg/version/versioned"
)

func main() {
	uri := flag.String("uri", os.Getenv("MONGOMIG_URI"), "MongoDB connection string, with the database")
	dir := flag.String("dir", "migrations", "the release's migration directory")
	name := flag.String("release", "dev", "the release's name")
	ttl := flag.Duration("ttl", release.DefaultTTL, "how long the announcement lives without a renewal")
	flag.Parse()
	if err := run(*uri, *dir, *name, *ttl, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "releaseapp:", err)
		os.Exit(1)
	}
}

func run(uri, dir, name string, ttl time.Duration, args []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	reg, err := version.New(os.DirFS(dir))
	if err != nil {
		return err
	}
	cs, err := connstring.ParseAndValidate(uri)
	if err != nil {
		return err
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	db := client.Database(cs.Database)
	switch {
	case len(args) == 1 && args[0] == "serve":
		return serve(ctx, db, reg, name, ttl)
	case len(args) == 2 && args[0] == "insert":
		return insert(ctx, db, reg, args[1])
	}
	return errors.New("usage: releaseapp [flags] serve | insert DOCUMENT")
}

// serve announces the release and keeps it announced until ctx ends.
func serve(ctx context.Context, db *mongo.Database, reg *version.Registry, name string, ttl time.Duration) error {
	a, err := release.Announce(ctx, db, reg, release.Options{Name: name, TTL: ttl})
	if err != nil {
		return err
	}
	defer a.Close(context.Background())
	// Write-backs wait until no older release is live.
	users := versioned.New(db.Collection("users"), reg,
		versioned.WithWriteBack(versioned.Sync), versioned.WithWriteBackGate(a))
	_ = users // the service's handlers read and write through users
	fmt.Printf("release %s announced\n", name)
	<-ctx.Done()
	return nil
}

// insert writes one users document as this release stamps it.
func insert(ctx context.Context, db *mongo.Database, reg *version.Registry, doc string) error {
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(doc), false, &d); err != nil {
		return err
	}
	d, err := reg.Stamp("users", d)
	if err != nil {
		return err
	}
	if _, err := db.Collection("users").InsertOne(ctx, d); err != nil {
		return err
	}
	fmt.Printf("inserted a users document at version %d\n", reg.Current("users"))
	return nil
}
