package sandbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the driver FerretDB itself uses, registered as "sqlite"
)

// The tuner keeps FerretDB's SQLite files fast (see docs/sandbox.md):
//
//   - every collection's table gets an index on _ferretdb_sjson->'$._id', the
//     exact expression FerretDB v1.24's updates, deletes and _id lookups filter
//     on (its own unique index is on _ferretdb_sjson->"_id", which SQLite's
//     planner does not match to them, so without ours each such write scans
//     the table);
//   - before a cursor opens, the WAL holds at least one commit that is not
//     checkpointed, so the cursor's read snapshot is taken from the WAL (read
//     mark > 0) rather than from the database file alone; a reader of the
//     file alone blocks every later checkpoint, and each auto-checkpoint then
//     re-sorts the whole WAL written since the cursor opened.
//
// It works through one SQLite connection of its own per database file, which
// SQLite's locking makes safe beside FerretDB's connections. The one thing
// that is not safe is a connection held across dropDatabase, which removes
// the file: the proxy closes ours first (barrier).

// tuneInterval is how often new database files and collections are looked
// for. A collection created by a client gets its index within about this
// long (before that its writes are merely slow).
const tuneInterval = 25 * time.Millisecond

// idIndexPrefix names our indexes: "_mongomig_id_" + table. FerretDB names
// its indexes table + "_" + index name, so they never start with this prefix
// unless a collection's own name does.
const idIndexPrefix = "_mongomig_id_"

type tuner struct {
	dir    string
	logger *slog.Logger

	mu  sync.Mutex
	dbs map[string]*tunedDB

	stop chan struct{}
	done chan struct{}
}

// tunedDB is the tuner's state for one database file.
type tunedDB struct {
	mu      sync.Mutex // held while conn is used, and by a drop's barrier
	conn    *sql.DB
	version int64 // PRAGMA data_version when tables were last indexed; -1 unknown
	indexed map[string]bool
	cookie  int64
}

func newTuner(dir string, logger *slog.Logger) *tuner {
	return &tuner{dir: dir, logger: logger, dbs: map[string]*tunedDB{}, stop: make(chan struct{}), done: make(chan struct{})}
}

func (t *tuner) get(name string) *tunedDB {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.dbs[name]
	if d == nil {
		d = &tunedDB{version: -1}
		t.dbs[name] = d
	}
	return d
}

func (t *tuner) path(name string) string { return filepath.Join(t.dir, name+".sqlite") }

// run looks for new files and collections every tuneInterval until close.
func (t *tuner) run() {
	defer close(t.done)
	tick := time.NewTicker(tuneInterval)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
			t.pass(false)
		}
	}
}

// pass indexes every collection of every database file. With wait false it
// skips a database another goroutine is using and one nobody wrote to since
// its last pass.
func (t *tuner) pass(wait bool) error {
	files, err := filepath.Glob(filepath.Join(t.dir, "*.sqlite"))
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sqlite")
		d := t.get(name)
		if wait {
			d.mu.Lock()
		} else if !d.mu.TryLock() {
			continue
		}
		err := t.index(d, name, wait)
		d.mu.Unlock()
		if err != nil {
			t.logger.Warn("sandbox: index collections", slog.String("db", name), slog.Any("error", err))
			errs = append(errs, fmt.Errorf("database %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// open opens d's connection if needed; false if the file does not exist.
// d.mu is held.
func (t *tuner) open(d *tunedDB, name string) (bool, error) {
	if d.conn != nil {
		return true, nil
	}
	p := t.path(name)
	if _, err := os.Stat(p); err != nil {
		return false, nil
	}
	u := url.URL{Scheme: "file", Opaque: filepath.ToSlash(p), RawQuery: "mode=rw&_pragma=busy_timeout(10000)"}
	conn, err := sql.Open("sqlite", u.String())
	if err != nil {
		return false, err
	}
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	conn.SetConnMaxIdleTime(0)
	d.conn, d.version, d.indexed = conn, -1, map[string]bool{}
	return true, nil
}

// index creates the _id expression index on every collection table of
// database name that lacks it. d.mu is held.
func (t *tuner) index(d *tunedDB, name string, force bool) error {
	ok, err := t.open(d, name)
	if !ok || err != nil {
		return err
	}
	ctx := context.Background()
	var version int64
	if err := d.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&version); err != nil {
		return err
	}
	if version == d.version && !force {
		return nil
	}
	rows, err := d.conn.QueryContext(ctx, "SELECT table_name FROM _ferretdb_collections")
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return nil // FerretDB is still creating the file
		}
		return err
	}
	var tables []string
	for rows.Next() {
		var tbl string
		if err := rows.Scan(&tbl); err != nil {
			_ = rows.Close()
			return err
		}
		if !d.indexed[tbl] {
			tables = append(tables, tbl)
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, tbl := range tables {
		q := fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s (_ferretdb_sjson->'$._id')",
			quoteIdent(idIndexPrefix+tbl), quoteIdent(tbl))
		if _, err := d.conn.ExecContext(ctx, q); err != nil {
			if strings.Contains(err.Error(), "no such table") {
				continue // dropped meanwhile
			}
			return fmt.Errorf("table %s: %w", tbl, err)
		}
		d.indexed[tbl] = true
	}
	d.version = version
	return nil
}

// beforeCursor leaves one un-checkpointed commit in database name's WAL if it
// has none, so a cursor opened next reads through the WAL.
func (t *tuner) beforeCursor(name string) {
	if name == "" {
		return
	}
	d := t.get(name)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := t.keepWAL(d, name); err != nil {
		t.logger.Warn("sandbox: keep the WAL un-checkpointed", slog.String("db", name), slog.Any("error", err))
	}
}

func (t *tuner) keepWAL(d *tunedDB, name string) error {
	ok, err := t.open(d, name)
	if !ok || err != nil {
		return err
	}
	ctx := context.Background()
	var busy, log, done int64
	// PASSIVE never waits and never blocks readers or writers; it reports
	// how many WAL frames exist and how many are in the database file.
	if err := d.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done); err != nil {
		return err
	}
	if log < 0 || log > done {
		return nil // not in WAL mode, or a commit is already pending
	}
	// A one-page commit FerretDB never looks at: the header's user_version.
	d.cookie = d.cookie%1000 + 1
	_, err = d.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", d.cookie))
	return err
}

// barrier closes the connection to database name and keeps it closed until
// the returned function is called (once its drop has been answered).
func (t *tuner) barrier(name string) func() {
	d := t.get(name)
	d.mu.Lock()
	d.close()
	var once sync.Once
	return func() { once.Do(d.mu.Unlock) }
}

func (d *tunedDB) close() {
	if d.conn != nil {
		_ = d.conn.Close()
		d.conn, d.indexed, d.version = nil, nil, -1
	}
}

// close stops the loop and closes every connection.
func (t *tuner) close() {
	close(t.stop)
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, d := range t.dbs {
		d.mu.Lock()
		d.close()
		d.mu.Unlock()
	}
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
