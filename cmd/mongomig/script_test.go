package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/internal/sandbox"
)

// TestMain lets each script run `mongomig` as a real process: the test
// binary re-executes itself as the stock command (with the sandbox).
// With MONGOMIG_RUN_AS_MAIN set it is mongomig (for the process tests).
func TestMain(m *testing.M) {
	if os.Getenv("MONGOMIG_RUN_AS_MAIN") != "" {
		main()
		return
	}
	programs := map[string]func(){"mongomig": main}
	for name, p := range integrityPrograms {
		programs[name] = p
	}
	testscript.Main(m, programs)
}

// TestScripts runs every testdata/script/*.txtar: the commands of README.md
// and docs/ exactly as written (TestDocsCommandsAreScripted checks that
// each one appears in a script). Each script starts in a directory holding
// a copy of the repository's migrations/ (so the default --dir works as
// it does for a user at the repository's root) and of the broken example
// directory README.md lints.
//
// Commands besides testscript's own:
//
//	code N PROG ARGS...  run PROG and require exit code N (stdout/stderr kept for stdout/stderr)
//	sandbox              start an embedded server for the rest of the script and set
//	                     MONGOMIG_URI to its database app (what the docs' --uri "$MONGOMIG_URI" reads)
//	samples              load the sample application's version-0 documents into $MONGOMIG_URI
//	fixsamples           fix the sample's deliberately invalid documents in $MONGOMIG_URI
//	holdlock             take the migration lock of $MONGOMIG_URI for an hour, as owner someone-else
//	runcmd JSON          run one database command (Extended JSON) against $MONGOMIG_URI's database app
//	blogposts            load the new user's blog posts, embedding 3,434 comments, into $MONGOMIG_URI
//	insert COLL FILE     insert FILE's Extended JSON documents (one a line) into COLL of $MONGOMIG_URI
//	count COLL FILTER N  require N documents of COLL of $MONGOMIG_URI to match FILTER (Extended JSON)
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/script/*.txtar")
	files = slices.DeleteFunc(files, isServerScript)
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "\ntestserver") {
			t.Errorf("%s uses testserver but is not named *_mongodb.txtar: TestScriptsMongoDB (the second server's run) would never run it", f)
		}
	}
	testscript.Run(t, scriptParams(files))
}

// TestScriptsMongoDB runs the scripts written for a real server
// (*_mongodb.txtar, guarded by [testserver]) on the server of
// MONGOMIG_TEST_URI: named ...MongoDB so that the second server's run
// (-run MongoDB) selects them.
func TestScriptsMongoDB(t *testing.T) {
	if os.Getenv("MONGOMIG_TEST_URI") == "" {
		t.Skip("MONGOMIG_TEST_URI is not set: the *_mongodb.txtar scripts need a server with TTL indexes, views and validators (TestScripts runs the sandbox's)")
	}
	files, _ := filepath.Glob("testdata/script/*_mongodb.txtar")
	if len(files) == 0 {
		t.Fatal("no testdata/script/*_mongodb.txtar")
	}
	testscript.Run(t, scriptParams(files))
}

func isServerScript(name string) bool { return strings.HasSuffix(name, "_mongodb.txtar") }

func scriptParams(files []string) testscript.Params {
	return testscript.Params{
		Files:               files,
		RequireExplicitExec: false,
		Condition:           scriptCondition,
		Setup: func(env *testscript.Env) error {
			for _, d := range []string{"../../migrations", "../../internal/cli/testdata/broken"} {
				dst := filepath.Join(env.WorkDir, filepath.Base(d))
				if filepath.Base(d) == "broken" {
					dst = filepath.Join(env.WorkDir, "internal/cli/testdata/broken")
				}
				if err := copyDir(d, dst); err != nil {
					return err
				}
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"code":       cmdCode,
			"sandbox":    cmdSandbox,
			"samples":    cmdSamples,
			"holdlock":   cmdHoldLock,
			"fixsamples": cmdFixSamples,
			"runcmd":     cmdRunCmd,
			"blogposts":  cmdBlogPosts,
			"gobuild":    scriptTeamCmds["gobuild"],
			"bg":         scriptTeamCmds["bg"],
			"stopbg":     scriptTeamCmds["stopbg"],
			"insert":     cmdInsert,
			"count":      cmdCount,
			"testserver": cmdTestServer,
		},
	}
}

func cmdCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: code N PROG ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("code: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("code: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

func cmdSandbox(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: sandbox")
	}
	srv, err := sandbox.Start(sandbox.Options{Dir: ts.MkAbs(".server")})
	if err != nil {
		ts.Fatalf("sandbox: %v", err)
	}
	ts.Defer(func() {
		ctx, cancel := context.WithTimeout(context.Background(), sandbox.StopTimeout)
		defer cancel()
		_ = srv.Stop(ctx)
	})
	ts.Setenv("MONGOMIG_URI", strings.TrimSuffix(srv.URI(), "/")+"/app")
}

func cmdSamples(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: samples")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(ts.Getenv("MONGOMIG_URI")))
	if err != nil {
		ts.Fatalf("samples: %v", err)
	}
	defer client.Disconnect(ctx)
	counts, err := sampledata.Load(ctx, client.Database("app"), 1)
	if err != nil {
		ts.Fatalf("samples: %v", err)
	}
	fmt.Fprintf(ts.Stdout(), "loaded %d users\n", counts.Users)
}

func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if filepath.Ext(p) == ".go" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

func cmdHoldLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: holdlock")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(ts.Getenv("MONGOMIG_URI")))
	if err != nil {
		ts.Fatalf("holdlock: %v", err)
	}
	defer client.Disconnect(ctx)
	now := time.Now()
	if _, err := client.Database("app").Collection("mongomig_lock").InsertOne(ctx, bson.D{
		{Key: "_id", Value: "mongomig"}, {Key: "owner", Value: "someone-else"}, {Key: "host", Value: "elsewhere"},
		{Key: "pid", Value: 1}, {Key: "acquiredAt", Value: now}, {Key: "expiresAt", Value: now.Add(time.Hour)},
	}); err != nil {
		ts.Fatalf("holdlock: %v", err)
	}
}

func cmdFixSamples(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: fixsamples")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(ts.Getenv("MONGOMIG_URI")))
	if err != nil {
		ts.Fatalf("fixsamples: %v", err)
	}
	defer client.Disconnect(ctx)
	if err := sampledata.FixInvalid(ctx, client.Database("app")); err != nil {
		ts.Fatalf("fixsamples: %v", err)
	}
}
