package runner_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
)

// processState reads the state letter of /proc/PID/stat ("T": stopped).
func processState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}

// stoppedHelper starts an `up` process (lease 1s) that stops itself with
// SIGSTOP at point, waits until it is stopped, and kills it when the test
// ends. The caller resumes it with SIGCONT.
func stoppedHelper(t *testing.T, uri, point string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to see that the helper stopped")
	}
	cmd := helper(t, uri, point)
	cmd.Env = append(cmd.Env, "MONGOMIG_HELPER_SIGNAL=STOP")
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	deadline := time.Now().Add(time.Minute)
	for processState(cmd.Process.Pid) != "T" {
		if time.Now().After(deadline) {
			t.Fatalf("the helper never stopped: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cmd, out
}

// TestPausedHolderSendsNothingAfterTakeover: an `up` process paused
// (SIGSTOP) between two commands for longer than its lease loses the lock
// to another runner; resumed, it must stop with "migration lock lost"
// without sending its next command (issue 12: it used to send its
// in-flight createIndexes without the lock). The index it would create is
// dropped while it is paused, so a command sent after the resume would
// bring it back.
func TestPausedHolderSendsNothingAfterTakeover(t *testing.T) {
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI()).Database("app")
	// Stop right after 0002's first index (userId_1_createdAt_-1); its
	// next command creates status_1.
	cmd, out := stoppedHelper(t, srv.URI(), "command:2:1")
	// Its lease (1s) expires; another runner takes over and applies all.
	time.Sleep(1500 * time.Millisecond)
	r := newRunner(t, db, samples(t))
	if _, err := r.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !indexNames(t, db.Collection("orders"))["status_1"] {
		t.Fatal("the second runner did not create status_1")
	}
	if err := db.RunCommand(context.Background(), bson.D{{Key: "dropIndexes", Value: "orders"}, {Key: "index", Value: "status_1"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if err == nil || !strings.Contains(out.String(), "migration lock lost") {
		t.Errorf("the resumed holder: %v, output %q; want exit 1 with \"migration lock lost\"", err, out.String())
	}
	if indexNames(t, db.Collection("orders"))["status_1"] {
		t.Error("the resumed holder sent createIndexes status_1 after losing the lock")
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1, 2, 3, 4) {
		t.Errorf("ledger = %v", v)
	}
	_ = runner.ErrLockLost
}

// TestForcedUnlockStopsTheHolder: `unlock --force` while an `up` holds the
// lock (an operator who wrongly believed it dead): the holder's next
// renewal finds its token gone, and it stops with "migration lock lost"
// instead of applying the rest without a lock.
func TestForcedUnlockStopsTheHolder(t *testing.T) {
	srv := sandboxtest.Start(t)
	db := sandboxtest.Connect(t, srv.URI()).Database("app")
	cmd, out := stoppedHelper(t, srv.URI(), "command:2:1")
	// Within its lease: force the lock away, then let it go on.
	if h, err := newRunner(t, db, samples(t)).Unlock(context.Background(), true); err != nil || h == nil {
		t.Fatalf("unlock --force: %v %v", h, err)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if err == nil || !strings.Contains(out.String(), "migration lock lost") {
		t.Fatalf("the holder whose lock was forced away: %v, output %q", err, out.String())
	}
	if v := ledgerVersions(t, db); !equalVersions(v, 1) {
		t.Errorf("ledger = %v: it recorded migrations without its lock", v)
	}
}
