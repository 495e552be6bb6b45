package sandbox_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox"
)

// openSQLite opens a database file of a stopped sandbox directly.
func openSQLite(t *testing.T, file string) *sql.DB {
	t.Helper()
	conn, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Opaque: file}).String())
	if err != nil {
		t.Fatal(err)
	}
	conn.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func exec1(t *testing.T, conn *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func tablesOf(t *testing.T, file string) []string {
	t.Helper()
	conn := openSQLite(t, file)
	defer conn.Close()
	rows, err := conn.Query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

// startNoted starts a server on dir and returns it with the notices Start gave.
func startNoted(t *testing.T, dir string) (*sandbox.Server, []string, error) {
	t.Helper()
	var notices []string
	s, err := sandbox.Start(sandbox.Options{Dir: dir, Notify: func(m string) { notices = append(notices, m) }})
	return s, notices, err
}

// TestStartRemovesAnEmptyDatabaseFile: what a kill between FerretDB's two
// steps of creating a database leaves (an empty file, or only the header
// page of WAL mode, 4096 bytes) is removed with a notice, and the database
// can then be created again.
func TestStartRemovesAnEmptyDatabaseFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, file string)
	}{
		{"zero bytes", func(t *testing.T, file string) {
			if err := os.WriteFile(file, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"WAL header only", func(t *testing.T, file string) {
			conn := openSQLite(t, file)
			var mode string
			if err := conn.QueryRow("PRAGMA journal_mode = wal").Scan(&mode); err != nil || mode != "wal" {
				t.Fatalf("journal_mode = %q, %v", mode, err)
			}
			_ = conn.Close()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "app.sqlite")
			tc.make(t, file)
			s, notices, err := startNoted(t, dir)
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			c := connect(t, s.URI())
			defer stop(t, s, c)
			if len(notices) != 1 || !strings.Contains(notices[0], "removed "+file+": it held no tables") {
				t.Errorf("notices = %q, want one that names %s", notices, file)
			}
			if _, err := c.Database("app").Collection("c").InsertOne(context.Background(), bson.D{{Key: "x", Value: 1}}); err != nil {
				t.Fatalf("insert after the repair: %v", err)
			}
		})
	}
}

// TestStartKeepsADatabaseWhoseTablesAreInItsWAL: a file that is only a
// header page is not empty when its WAL holds committed tables (a process
// killed before any checkpoint); Start must read it through SQLite, keep it,
// and serve its documents.
func TestStartKeepsADatabaseWhoseTablesAreInItsWAL(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	s, err := sandbox.Start(sandbox.Options{Dir: src})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s.URI())
	if _, err := c.Database("app").Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: "kept"}}); err != nil {
		t.Fatal(err)
	}
	// Copy the files while the server runs: its WAL is not checkpointed
	// into the main file yet (fewer than 1000 pages written), as after a
	// kill.
	dir := t.TempDir()
	for _, name := range []string{"app.sqlite", "app.sqlite-wal"} {
		copyFile(t, filepath.Join(src, name), filepath.Join(dir, name))
	}
	stop(t, s, c)
	if fi, err := os.Stat(filepath.Join(dir, "app.sqlite")); err != nil || fi.Size() > 4096 {
		t.Fatalf("main file holds more than its header (%v, %v): the test no longer shows a WAL-only database", fi, err)
	}

	s2, notices, err := startNoted(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	c2 := connect(t, s2.URI())
	defer stop(t, s2, c2)
	if len(notices) != 0 {
		t.Errorf("notices = %q, want none", notices)
	}
	if n, err := c2.Database("app").Collection("c").CountDocuments(ctx, bson.D{{Key: "_id", Value: "kept"}}); err != nil || n != 1 {
		t.Fatalf("document in the WAL: count %d, %v", n, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStartRefusesADamagedDatabaseFile: a file Start cannot prove empty and
// FerretDB cannot open is left untouched, and the error names it, says why
// and how to set it aside; once it is moved, the directory starts.
func TestStartRefusesADamagedDatabaseFile(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		make      func(t *testing.T, file string)
	}{
		{"not SQLite", "it is not a SQLite database or is damaged", func(t *testing.T, file string) {
			if err := os.WriteFile(file, []byte(strings.Repeat("not a database\n", 300)), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"no catalogue", "it has tables but no _ferretdb_collections table", func(t *testing.T, file string) {
			exec1(t, openSQLite(t, file), "CREATE TABLE people (name TEXT)")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "app.sqlite")
			tc.make(t, file)
			before, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = startNoted(t, dir)
			var de *sandbox.DamagedError
			if !errors.As(err, &de) || de.File != file {
				t.Fatalf("Start: %v, want a DamagedError for %s", err, file)
			}
			for _, want := range []string{file, tc.why, "mv " + file + "* " + dir + ".damaged/"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if after, err := os.ReadFile(file); err != nil || string(after) != string(before) {
				t.Fatalf("Start changed the file it refused (%v)", err)
			}
			if err := os.Rename(file, filepath.Join(t.TempDir(), "app.sqlite")); err != nil {
				t.Fatal(err)
			}
			s, err := sandbox.Start(sandbox.Options{Dir: dir})
			if err != nil {
				t.Fatalf("Start once the file is moved: %v", err)
			}
			_ = s.Stop(context.Background())
		})
	}
}

// TestStartRepairsCollectionTablesOutsideTheCatalogue: a collection's table
// with no catalogue row is what a kill leaves between FerretDB creating the
// table and its row (the table is empty: dropped) or between deleting the
// row and dropping the table (documents remain: renamed aside, kept). In
// both cases the collection can be created again.
func TestStartRepairsCollectionTablesOutsideTheCatalogue(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s.URI())
	db := c.Database("app")
	for _, coll := range []string{"created", "dropped", "kept"} {
		if _, err := db.Collection(coll).InsertOne(ctx, bson.D{{Key: "_id", Value: coll}}); err != nil {
			t.Fatal(err)
		}
	}
	stop(t, s, c)
	file := filepath.Join(dir, "app.sqlite")
	conn := openSQLite(t, file)
	var created, dropped string
	if err := conn.QueryRow("SELECT table_name FROM _ferretdb_collections WHERE name = 'created'").Scan(&created); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow("SELECT table_name FROM _ferretdb_collections WHERE name = 'dropped'").Scan(&dropped); err != nil {
		t.Fatal(err)
	}
	exec1(t, conn, "DELETE FROM "+`"`+created+`"`)
	exec1(t, conn, "DELETE FROM _ferretdb_collections WHERE name IN ('created', 'dropped')")
	exec1(t, conn, "CREATE TABLE notes (text TEXT)") // not FerretDB's: left alone
	_ = conn.Close()

	s2, notices, err := startNoted(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	c2 := connect(t, s2.URI())
	defer stop(t, s2, c2)
	wantNotices := []string{
		"dropped table " + created + " of " + file + ": it was empty and in no collection",
		"renamed table " + dropped + " of " + file + " to _mongomig_orphan_" + dropped + ": it holds documents",
	}
	if len(notices) != len(wantNotices) {
		t.Fatalf("notices = %q, want %d", notices, len(wantNotices))
	}
	for _, want := range wantNotices {
		if !strings.Contains(strings.Join(notices, "\n"), want) {
			t.Errorf("notices = %q, want one saying %q", notices, want)
		}
	}
	db2 := c2.Database("app")
	for _, coll := range []string{"created", "dropped"} {
		if _, err := db2.Collection(coll).InsertOne(ctx, bson.D{{Key: "_id", Value: "again"}}); err != nil {
			t.Fatalf("create %s again: %v", coll, err)
		}
		if _, err := db2.Collection(coll).Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}}); err != nil {
			t.Fatalf("index %s: %v", coll, err)
		}
	}
	if n, err := db2.Collection("kept").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("kept: %d documents, %v", n, err)
	}
	names := strings.Join(tablesOf(t, file), " ")
	for _, want := range []string{"_mongomig_orphan_" + dropped, "notes"} {
		if !strings.Contains(names, want) {
			t.Errorf("tables %s: %s is gone", names, want)
		}
	}
}

// TestStartRepairsIndexesACutShortCommandLeft: the states a kill leaves
// inside FerretDB's catalogue, each made by hand in a stopped directory:
// a collection whose settings were never written (and whose _id index was
// never created), an index created but not listed, an index dropped but
// still listed. After Start each collection behaves as if the cut-short
// command had never begun (or, for the drop, had finished).
func TestStartRepairsIndexesACutShortCommandLeft(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s.URI())
	db := c.Database("app")
	if err := db.CreateCollection(ctx, "half"); err != nil {
		t.Fatal(err)
	}
	x := mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}}
	y := mongo.IndexModel{Keys: bson.D{{Key: "y", Value: 1}}, Options: options.Index().SetUnique(true)}
	for _, m := range []mongo.IndexModel{x, y} {
		if _, err := db.Collection("c").Indexes().CreateOne(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	stop(t, s, c)
	file := filepath.Join(dir, "app.sqlite")
	conn := openSQLite(t, file)
	var half, ctable, settings string
	if err := conn.QueryRow("SELECT table_name FROM _ferretdb_collections WHERE name = 'half'").Scan(&half); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow("SELECT table_name, settings FROM _ferretdb_collections WHERE name = 'c'").Scan(&ctable, &settings); err != nil {
		t.Fatal(err)
	}
	exec1(t, conn, `DROP INDEX "`+half+`__id_"`)
	exec1(t, conn, "UPDATE _ferretdb_collections SET settings = '{}' WHERE name = 'half'")
	// x_1 created but not listed; y_1 dropped but still listed.
	var listed struct {
		Indexes []map[string]any `json:"indexes"`
	}
	if err := json.Unmarshal([]byte(settings), &listed); err != nil || len(listed.Indexes) != 3 {
		t.Fatalf("settings of c: %s (%v)", settings, err)
	}
	exec1(t, conn, `UPDATE _ferretdb_collections SET settings = json_remove(settings, '$.indexes[1]') WHERE name = 'c'`)
	exec1(t, conn, `DROP INDEX "`+ctable+`_y_1"`)
	_ = conn.Close()

	s2, notices, err := startNoted(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	c2 := connect(t, s2.URI())
	defer stop(t, s2, c2)
	for _, want := range []string{
		"removed collection half of " + file + ": it held no documents",
		"dropped index x_1 of collection c in " + file,
		"unlisted index y_1 of collection c in " + file,
	} {
		if !strings.Contains(strings.Join(notices, "\n"), want) {
			t.Errorf("notices = %q, want one saying %q", notices, want)
		}
	}
	db2 := c2.Database("app")
	doc := bson.D{{Key: "_id", Value: 1}, {Key: "y", Value: 1}}
	for _, coll := range []string{"half", "c"} {
		if _, err := db2.Collection(coll).InsertOne(ctx, doc); err != nil {
			t.Fatal(err)
		}
		if _, err := db2.Collection(coll).InsertOne(ctx, doc); !mongo.IsDuplicateKeyError(err) {
			t.Errorf("%s: a second document with _id 1: %v, want a duplicate key error", coll, err)
		}
	}
	idx := db2.Collection("c").Indexes()
	if err := idx.DropOne(ctx, "y_1"); err == nil {
		t.Error("dropping y_1 again succeeded: it is still listed")
	}
	for _, m := range []mongo.IndexModel{x, y} {
		if _, err := idx.CreateOne(ctx, m); err != nil {
			t.Errorf("create index %v again: %v", m.Keys, err)
		}
	}
	if _, err := db2.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "y", Value: 1}}); !mongo.IsDuplicateKeyError(err) {
		t.Errorf("y_1 created again does not enforce uniqueness: %v", err)
	}
}
