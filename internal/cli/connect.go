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

	"github.com/mongomig/mongomig/internal/sandbox"
)

// sandboxDB is the database used on the embedded sandbox when --db is not
// given (its URI names none).
const sandboxDB = "app"

// connectTimeout bounds server selection, so a wrong --uri fails in
// seconds with a clear message instead of hanging.
const connectTimeout = 10 * time.Second

// connect opens the database the global flags name: the embedded sandbox
// (--embedded DIR) or --uri. close disconnects and, for the sandbox, stops
// the server.
func (e *env) connect(ctx context.Context) (db *mongo.Database, close func(), err error) {
	g := e.g
	if g.Embedded != "" && g.URI != "" {
		return nil, nil, usageError(errors.New("--embedded and --uri are exclusive: pick one server"))
	}
	uri, dbName := g.URI, g.DB
	selectTimeout := connectTimeout
	var srv *sandbox.Server
	switch {
	case g.Embedded != "":
		srv, err = sandbox.Start(sandbox.Options{Dir: g.Embedded})
		if err != nil {
			return nil, nil, err
		}
		uri = srv.URI()
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
		if srv != nil {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sandbox.StopTimeout)
			defer cancel()
			_ = srv.Stop(sctx)
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
