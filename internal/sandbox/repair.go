package sandbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// FerretDB v1.24 takes several SQLite statements, each its own commit, for
// what a client sees as one step, so a process killed between two of them
// leaves a state FerretDB never expects (see docs/sandbox.md, "What survives
// a kill"):
//
//   - creating a database: the file (with its WAL header), then the
//     catalogue table _ferretdb_collections. A file without the catalogue
//     makes every later start fail ("no such table"). If it holds no table at
//     all it is provably empty and [repair] removes it.
//   - creating a collection: its table, then its catalogue row; dropping one:
//     the row, then the table. A table without a row makes every later
//     creation of that collection fail ("table already exists"). If it holds
//     no document [repair] drops it; otherwise (a drop cut short) it renames it
//     to orphanPrefix+table, keeping its documents, and drops its indexes
//     (which hold no data of their own) so their names are free again.
//
// catalogue.go repairs the states a kill leaves inside the catalogue.
// Anything else [repair] cannot prove harmless makes [Start] fail with an
// error that names the file, says why and what to do; it never deletes a
// row of data.

// catalogue is FerretDB's table listing a database's collections.
const catalogue = "_ferretdb_collections"

// orphanPrefix names the tables repair set aside.
const orphanPrefix = "_mongomig_orphan_"

// DamagedError is returned by [Start] when a database file in the directory
// is one the server cannot open and that is not provably empty.
type DamagedError struct {
	File string // the database file
	Why  string // what is wrong with it
}

func (e *DamagedError) Error() string {
	dir := filepath.Dir(e.File)
	return fmt.Sprintf("sandbox: cannot open database file %s: %s; to start without that database, move it "+
		"and its -wal and -shm files, if any, out of %s (mkdir %s.damaged && mv %s* %s.damaged/), or delete them if they hold nothing you need",
		e.File, e.Why, dir, dir, e.File, dir)
}

// tableName matches the tables FerretDB creates for collections: the
// lower-cased collection name, "_" and eight hex digits of its hash.
var tableName = regexp.MustCompile(`^.+_[0-9a-f]{8}$`)

// repair checks every database file in dir before FerretDB opens them,
// repairs what a kill left (see above) and describes each repair in a
// one-line notice. dir is locked.
func repair(dir string) (notices []string, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sqlite"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		n, err := repairFile(f)
		if err != nil {
			return notices, err
		}
		notices = append(notices, n...)
	}
	return notices, nil
}

func repairFile(file string) ([]string, error) {
	u := url.URL{Scheme: "file", Opaque: filepath.ToSlash(file), RawQuery: "mode=rw&_pragma=busy_timeout(10000)"}
	conn, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	tables, err := schemaTables(conn)
	if err != nil {
		_ = conn.Close()
		return nil, &DamagedError{File: file, Why: "it is not a SQLite database or is damaged (" + err.Error() + ")"}
	}
	if len(tables) == 0 {
		// SQLite replayed any WAL when it opened the file: no table
		// anywhere means no document anywhere.
		if err := conn.Close(); err != nil {
			return nil, err
		}
		if err := removeDatabase(file); err != nil {
			return nil, err
		}
		return []string{fmt.Sprintf("sandbox: removed %s: it held no tables (a process was killed while it created the database)", file)}, nil
	}
	defer conn.Close()
	if !tables[catalogue] {
		return nil, &DamagedError{File: file, Why: "it has tables but no " + catalogue + " table, so it is not a FerretDB database or was damaged"}
	}
	notices, err := repairOrphans(conn, file, tables)
	if err == nil {
		var n []string
		n, err = repairCatalogue(conn, file)
		notices = append(notices, n...)
	}
	var de *DamagedError
	if err != nil && !errors.As(err, &de) {
		err = fmt.Errorf("sandbox: repair %s: %w", file, err)
	}
	return notices, err
}

// schemaTables lists the tables of the database on conn.
func schemaTables(conn *sql.DB) (map[string]bool, error) {
	rows, err := conn.QueryContext(context.Background(), "SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tables := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		tables[name] = true
	}
	return tables, rows.Err()
}

// removeDatabase removes a database file and the WAL, shared-memory and
// rollback journal files beside it.
func removeDatabase(file string) error {
	for _, suffix := range []string{"-wal", "-shm", "-journal", ""} {
		if err := os.Remove(file + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("sandbox: remove %s: %w", file+suffix, err)
		}
	}
	return nil
}

// repairOrphans drops or sets aside every table of a collection that is
// not in the catalogue.
func repairOrphans(conn *sql.DB, file string, tables map[string]bool) ([]string, error) {
	ctx := context.Background()
	listed := map[string]bool{}
	rows, err := conn.QueryContext(ctx, "SELECT table_name FROM "+quoteIdent(catalogue))
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tbl string
		if err := rows.Scan(&tbl); err != nil {
			_ = rows.Close()
			return nil, err
		}
		listed[tbl] = true
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	var notices []string
	for tbl := range tables {
		if listed[tbl] || !tableName.MatchString(tbl) || strings.HasPrefix(tbl, orphanPrefix) {
			continue // a collection's, or not one FerretDB made
		}
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM "+quoteIdent(tbl)+" LIMIT 1)").Scan(&n); err != nil {
			return notices, fmt.Errorf("table %s: %w", tbl, err)
		}
		if n == 0 {
			if _, err := conn.ExecContext(ctx, "DROP TABLE "+quoteIdent(tbl)); err != nil {
				return notices, fmt.Errorf("table %s: %w", tbl, err)
			}
			notices = append(notices, fmt.Sprintf("sandbox: dropped table %s of %s: it was empty and in no collection (a process was killed while it created the collection)", tbl, file))
			continue
		}
		aside := orphanPrefix + tbl
		for i := 2; tables[aside]; i++ {
			aside = orphanPrefix + tbl + "_" + strconv.Itoa(i)
		}
		tables[aside] = true
		err := setAside(conn, tbl, aside)
		if err != nil {
			return notices, fmt.Errorf("table %s: %w", tbl, err)
		}
		notices = append(notices, fmt.Sprintf("sandbox: renamed table %s of %s to %s: it holds documents but is in no collection (a process was killed while it dropped the collection); delete it with sqlite3 once you do not need them", tbl, file, aside))
	}
	return notices, nil
}

// setAside drops the indexes of table tbl and renames it to aside, in one
// transaction.
func setAside(conn *sql.DB, tbl, aside string) error {
	ctx := context.Background()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	indexes, err := tableIndexes(tx, tbl)
	if err != nil {
		return err
	}
	for idx := range indexes {
		if _, err := tx.ExecContext(ctx, "DROP INDEX "+quoteIdent(idx)); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, "ALTER TABLE "+quoteIdent(tbl)+" RENAME TO "+quoteIdent(aside)); err != nil {
		return err
	}
	return tx.Commit()
}
