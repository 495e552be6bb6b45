package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"
)

// sandboxDB is the database used on the embedded sandbox when --db is not
// given (its URI names none).
const sandboxDB = "app"

// embeddedStopTimeout bounds how long stopping the sandbox may take.
const embeddedStopTimeout = 10 * time.Second

// errNoEmbedded answers --embedded and demo in a binary built without the sandbox.
var errNoEmbedded = errors.New("this mongomig binary was built without the embedded sandbox (--embedded, demo): " +
	"use the stock one (go run github.com/mongomig/mongomig/cmd/mongomig) or pass --uri")

// connectTimeout bounds server selection, so a wrong --uri fails in
// seconds with a clear message instead of hanging.
const connectTimeout = 10 * time.Second

// connect opens the database the global flags name: the embedded sandbox
// (--embedded DIR) or --uri. close disconnects and, for the sandbox, stops
// the server.
func (e *env) connect(ctx context.Context) (db *mongo.Database, close func(), err error) {
	g := e.g
	if g.Embedded != "" && g.URI != "" {
		how := "drop one of the two flags"
		if strings.Contains(g.EmbeddedSource+g.URISource, "environment") {
			how = "unset the environment variable, or drop the flag"
		}
		return nil, nil, usageError(fmt.Errorf("%s and %s both name a server: pick one (%s)", g.EmbeddedSource, g.URISource, how))
	}
	uri, dbName := g.URI, g.DB
	selectTimeout := connectTimeout
	var stopEmbedded func(context.Context) error
	switch {
	case g.Embedded != "":
		if e.cfg.Embedded == nil {
			return nil, nil, usageError(errNoEmbedded)
		}
		uri, stopEmbedded, err = e.cfg.Embedded(ctx, g.Embedded)
		if err != nil {
			return nil, nil, fmt.Errorf("start the embedded sandbox in %s: %w", g.Embedded, err)
		}
		if dbName == "" {
			dbName = sandboxDB
		}
	case uri == "":
		return nil, nil, usageError(errNoTarget)
	default:
		cs, perr := connstring.ParseAndValidate(uri)
		if perr != nil {
			return nil, nil, usageError(fmt.Errorf("invalid --uri %s: %s", redactURI(uri), redactErr(perr.Error(), uri)))
		}
		if dbName == "" {
			dbName = cs.Database
		}
		if cs.ServerSelectionTimeoutSet {
			selectTimeout = cs.ServerSelectionTimeout
		}
		if dbName == "" {
			return nil, nil, usageError(fmt.Errorf("no database: pass --db (or MONGOMIG_DB), or name it in the URI (%s/mydb)", strings.TrimSuffix(redactURI(uri), "/")))
		}
	}
	stopServer := func() {
		if stopEmbedded != nil {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), embeddedStopTimeout)
			defer cancel()
			_ = stopEmbedded(sctx)
		}
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(selectTimeout).SetAppName("mongomig"))
	if err != nil {
		stopServer()
		return nil, nil, fmt.Errorf("connect to %s: %s", redactURI(uri), redactErr(err.Error(), uri))
	}
	closeAll := func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = client.Disconnect(dctx)
		stopServer()
	}
	if err := client.Ping(ctx, nil); err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("cannot reach %s: %s; check the address and that the server is running", redactURI(uri), redactErr(err.Error(), uri))
	}
	return client.Database(dbName), closeAll, nil
}
