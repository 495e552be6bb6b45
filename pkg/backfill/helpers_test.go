package backfill_test

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox"
)

// TestMain runs this test binary as a helper process when a test asks it
// to: a backfill of its own (MONGOMIG_HELPER_MODE=backfill) or a sandbox
// server a test can kill (serve).
func TestMain(m *testing.M) {
	if uri := os.Getenv("MONGOMIG_HELPER_URI"); uri != "" {
		switch os.Getenv("MONGOMIG_HELPER_MODE") {
		case "backfill":
			client, err := mongo.Connect(options.Client().ApplyURI(uri))
			if err != nil {
				os.Exit(1)
			}
			os.Exit(helperBackfill(client.Database("app")))
		case "serve":
			os.Exit(helperServe())
		}
		os.Exit(2)
	}
	os.Exit(m.Run())
}

var (
	samples   = fixtures.Samples
	newRunner = fixtures.NewRunner
)

// serveProcess runs a sandbox in a child process (so a test can kill it
// like a crashed server) and returns it with its URI.
func serveProcess(t testing.TB, dir, addr string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MONGOMIG_HELPER_URI=serve", "MONGOMIG_HELPER_MODE=serve", "MONGOMIG_SERVE_DIR="+dir, "MONGOMIG_SERVE_ADDR="+addr)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var line string
	for i := 0; i < 50 && line == ""; i++ {
		buf := make([]byte, 256)
		n, _ := stdout.Read(buf)
		line = strings.TrimSpace(string(buf[:n]))
	}
	if !strings.HasPrefix(line, "mongodb://") {
		t.Fatalf("serve printed %q", line)
	}
	return cmd, line
}

func helperServe() int {
	srv, err := sandbox.Start(sandbox.Options{Dir: os.Getenv("MONGOMIG_SERVE_DIR"), Addr: os.Getenv("MONGOMIG_SERVE_ADDR")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(srv.URI())
	select {}
}

// trials is MONGOMIG_TRIALS when it is above def (make reliability), else
// def.
func trials(def int) int {
	if v, err := strconv.Atoi(os.Getenv("MONGOMIG_TRIALS")); err == nil && v > def {
		return v
	}
	return def
}
