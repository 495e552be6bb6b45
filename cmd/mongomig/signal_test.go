package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// mongomigProcess returns the test binary set up to run as the stock
// mongomig (see TestMain) with args, in dir, with extra environment.
func mongomigProcess(t *testing.T, dir string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "MONGOMIG_RUN_AS_MAIN=1"), env...)
	return cmd
}

func exitCodeOf(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestSIGTERMWhileWaitingForTheLock: SIGTERM (what Kubernetes and CI send)
// stops `up` cleanly: exit 130 and a message that says what to do, not a
// server failure.
func TestSIGTERMWhileWaitingForTheLock(t *testing.T) {
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI()).Database("app")
	now := time.Now()
	if _, err := db.Collection("mongomig_lock").InsertOne(context.Background(), bson.D{
		{Key: "_id", Value: "mongomig"}, {Key: "owner", Value: "someone-else"}, {Key: "host", Value: "elsewhere"},
		{Key: "pid", Value: 1}, {Key: "acquiredAt", Value: now}, {Key: "expiresAt", Value: now.Add(time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := mongomigProcess(t, "../..", nil, "--uri", strings.TrimSuffix(srv.URI(), "/")+"/app", "up", "--lock-wait", "2m")
	pr, pw, _ := os.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		stderr.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "someone-else") {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		stderr.WriteString(sc.Text() + "\n")
	}
	err := cmd.Wait()
	if code := exitCodeOf(err); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted before anything was applied; run `mongomig up` again to continue") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// TestDemoCleansUpWhenStopped: `mongomig demo | head -1` (SIGPIPE) and a
// SIGTERM both leave no temporary directory behind.
func TestDemoCleansUpWhenStopped(t *testing.T) {
	for _, how := range []string{"closed pipe", "SIGTERM"} {
		t.Run(how, func(t *testing.T) {
			tmp := t.TempDir()
			cmd := mongomigProcess(t, "../..", []string{"TMPDIR=" + tmp}, "demo")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(out).ReadString('\n')
			if !strings.Contains(line, "mongomig demo:") {
				t.Fatalf("first line %q", line)
			}
			if how == "SIGTERM" {
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
			out.Close() // the reader goes away, as `head -1` does
			_ = cmd.Wait()
			entries, _ := os.ReadDir(tmp)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), "mongomig-demo-") {
					t.Errorf("left behind %s (stderr: %s)", e.Name(), stderr.String())
				}
			}
		})
	}
}
