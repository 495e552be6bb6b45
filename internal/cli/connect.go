package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/fatih/color"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"github.com/mongomig/mongomig/pkg/migration"
)

// sandboxDB is the database used on the embedded sandbox when --db is not
// given (its URI names none).
const sandboxDB = "app"

// embeddedStopTimeout bounds how long stopping the sandbox may take.
const embeddedStopTimeout = 10 * time.Second

// errNoEmbedded answers --embedded and demo in a binary built without the sandbox.
var errNoEmbedded = errors.New("this mongomig binary was built without the embedded sandbox (--embedded, demo): " +
	"use the stock one (go run github.com/mongomig/mongomig/cmd/mongomig) or pass --uri")

// sandboxCreators are the commands that may start the sandbox in a
// directory that does not exist yet (saying so): every other one would
// only show an empty database, which after a typo in --embedded looks
// like a database where nothing was ever applied.
var sandboxCreators = map[string]bool{"up": true, "demo": true, "info": true, "sandbox serve": true}

// checkSandboxDir refuses (exit 2) an --embedded DIR that does not exist
// unless the command may create it, and says whether it will be created.
func (e *env) checkSandboxDir(dir string) (created bool, err error) {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return false, usageError(fmt.Errorf("%s %s is a file, not a directory: name the sandbox's directory", e.g.EmbeddedSource, dir))
	case err == nil:
		return false, e.checkSandboxFiles(dir)
	case !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("%s %s: %w", e.g.EmbeddedSource, dir, err)
	case sandboxCreators[e.command]:
		return true, nil
	}
	return false, usageError(fmt.Errorf("%s %s: no such directory, so `%s` has no sandbox to read; check the name, or create the sandbox with `mongomig --embedded %s up` (or demo, or info)",
		e.g.EmbeddedSource, dir, e.command, dir))
}

// sandboxFile matches what a sandbox keeps in its directory: a SQLite
// file per database (with its WAL and shared-memory files) and the lock
// of the process serving it.
var sandboxFile = regexp.MustCompile(`^(.+\.sqlite(-wal|-shm|-journal)?|mongomig-sandbox\.lock)$`)

// checkSandboxFiles refuses an existing --embedded directory that holds
// anything but a sandbox's files (dot files aside), such as the migration
// files: the sandbox would put its databases among them and show an empty
// database, where the user meant --dir, or another directory.
func (e *env) checkSandboxFiles(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%s %s: %w", e.g.EmbeddedSource, dir, err)
	}
	for _, de := range entries {
		if name := de.Name(); !strings.HasPrefix(name, ".") && !sandboxFile.MatchString(name) {
			return usageError(fmt.Errorf("%s %s holds %s, which is not a sandbox's: --embedded names the directory where the sandbox keeps its databases (DIR/app.sqlite), not the migrations (that is --dir); name an empty or new directory, such as .sandbox",
				e.g.EmbeddedSource, dir, migration.DisplayName(name)))
		}
		if err := sandboxFileRegular(e.g.EmbeddedSource, dir, de); err != nil {
			return err
		}
	}
	return nil
}

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
		created, err := e.checkSandboxDir(g.Embedded)
		if err != nil {
			return nil, nil, err
		}
		uri, stopEmbedded, err = e.cfg.Embedded(ctx, g.Embedded)
		if err != nil {
			return nil, nil, fmt.Errorf("start the embedded sandbox in %s: %w", g.Embedded, err)
		}
		if created {
			fmt.Fprintf(e.out.err, "%s created the sandbox directory %s (a new, empty database)\n", paint(e.out.errColor, color.FgYellow, "note:"), g.Embedded)
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
		return nil, nil, pingError(uri, err)
	}
	return client.Database(dbName), closeAll, nil
}
