package sandbox_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox"
)

// killRounds is how many times TestKillLeavesAUsableDirectory kills a
// writer: SANDBOX_KILL_ROUNDS, or a short default for make test.
func killRounds() int {
	if n, err := strconv.Atoi(os.Getenv("SANDBOX_KILL_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 12
}

// workload creates databases and collections and drops them again, the
// steps FerretDB takes in several SQLite statements each (a database file,
// then its _ferretdb_collections table; a collection's table, then its
// catalogue row, then its _id index, then the row's settings; a catalogue
// row deleted, then the table dropped; an index created, then listed; an
// index dropped, then unlisted). A kill lands between two of them sooner or
// later.
func workload(ctx context.Context, c *mongo.Client, once bool) error {
	for i := 0; ; i++ {
		db := c.Database("k" + strconv.Itoa(i%3))
		for _, coll := range []string{"a", "b"} {
			if _, err := db.Collection(coll).InsertOne(ctx, bson.D{{Key: "i", Value: i}}); err != nil {
				return fmt.Errorf("insert into %s.%s: %w", db.Name(), coll, err)
			}
		}
		idx := db.Collection("b").Indexes()
		if _, err := idx.CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}}); err != nil {
			return fmt.Errorf("create index on %s.b: %w", db.Name(), err)
		}
		if i%2 == 0 {
			if err := idx.DropOne(ctx, "x_1"); err != nil {
				return fmt.Errorf("drop index of %s.b: %w", db.Name(), err)
			}
		}
		if err := db.Collection("a").Drop(ctx); err != nil {
			return fmt.Errorf("drop %s.a: %w", db.Name(), err)
		}
		if i%2 == 1 {
			if err := db.Drop(ctx); err != nil {
				return fmt.Errorf("drop %s: %w", db.Name(), err)
			}
		}
		if once && i == 5 {
			return nil
		}
	}
}

// killWriter is the child process: it serves dir and runs workload until
// it is killed. An error (a directory an earlier kill left unusable) is
// printed and exits 1.
func killWriter(dir string) int {
	s, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	c, err := mongo.Connect(mongoOpts(s.URI()))
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ready")
	fmt.Println("error:", workload(context.Background(), c, false))
	return 1
}

// TestKillLeavesAUsableDirectory kills (SIGKILL) a process writing to a
// sandbox directory at varied moments, and after each kill the directory
// must start and take the same writes again: first in this process, then
// in the next writer. Without the start-up repair a kill between FerretDB
// creating a database file and creating its catalogue table left a file
// every later start refused ("no such table: _ferretdb_collections").
func TestKillLeavesAUsableDirectory(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	repairs := map[string]int{} // what the repairs were, for the log
	notify := func(msg string) {
		w := strings.Fields(strings.TrimPrefix(msg, "sandbox: "))
		if w[1] != "table" && w[1] != "collection" && w[1] != "index" {
			w[1] = "file"
		}
		repairs[w[0]+" "+w[1]]++
		t.Log(msg)
	}
	defer func() { t.Logf("repairs after %d kills: %v", killRounds(), repairs) }()
	for round := range killRounds() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "SANDBOX_KILL_WRITER="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		out := bufio.NewReader(stdout)
		if line, _ := out.ReadString('\n'); line != "ready\n" {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("round %d: writer did not start: %q", round, line)
		}
		// 0 to 9.5 ms into the workload, a different moment each round.
		time.Sleep(time.Duration(round*7%20) * 500 * time.Microsecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		rest, _ := out.ReadString(0)
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != -1 {
			t.Fatalf("round %d: the writer stopped by itself before it was killed: %v\n%s", round, err, rest)
		}

		s, err := sandbox.Start(sandbox.Options{Dir: dir, Notify: notify})
		if err != nil {
			t.Fatalf("round %d: start after kill -9: %v", round, err)
		}
		c, err := mongo.Connect(mongoOpts(s.URI()))
		if err != nil {
			t.Fatal(err)
		}
		werr := everyCollectionHasItsIDIndex(ctx, c)
		if werr == nil {
			werr = workload(ctx, c, true)
		}
		_ = c.Disconnect(ctx)
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if werr != nil {
			t.Fatalf("round %d: after kill -9: %v", round, werr)
		}
	}
}

func mongoOpts(uri string) *options.ClientOptions { return options.Client().ApplyURI(uri) }

// everyCollectionHasItsIDIndex: a collection whose creation a kill cut
// short must not survive without its unique _id index.
func everyCollectionHasItsIDIndex(ctx context.Context, c *mongo.Client) error {
	dbs, err := c.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		return err
	}
	for _, name := range dbs {
		colls, err := c.Database(name).ListCollectionNames(ctx, bson.D{})
		if err != nil {
			return err
		}
		for _, coll := range colls {
			specs, err := c.Database(name).Collection(coll).Indexes().ListSpecifications(ctx)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(specs, func(s mongo.IndexSpecification) bool { return s.Name == "_id_" }) {
				return fmt.Errorf("collection %s.%s has no _id index: %v", name, coll, specs)
			}
		}
	}
	return nil
}
