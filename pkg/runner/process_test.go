package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestMain lets the test binary act as a separate `up` process: with
// MONGOMIG_HELPER_URI set it runs Up against that server and exits, dying
// by SIGKILL at MONGOMIG_HELPER_KILL ("point:version:index") if given.
func TestMain(m *testing.M) {
	if uri := os.Getenv("MONGOMIG_HELPER_URI"); uri != "" {
		switch os.Getenv("MONGOMIG_HELPER_MODE") {
		case "down":
			client, err := mongo.Connect(options.Client().ApplyURI(uri))
			if err != nil {
				os.Exit(1)
			}
			os.Exit(helperDown(client.Database(helperDB())))
		case "serve":
			os.Exit(fixtures.HelperServe())
		case "expire":
			os.Exit(helperExpire(uri))
		case "up-slow":
			// Pauses after each command, so a test can stop the server mid-run.
			os.Exit(helperUpWith(uri, "", 100*time.Millisecond))
		}
		os.Exit(helperUp(uri, os.Getenv("MONGOMIG_HELPER_KILL")))
	}
	os.Exit(m.Run())
}

func helperUp(uri, killAt string) int { return helperUpWith(uri, killAt, 0) }

// helperDB is the database a helper process migrates: MONGOMIG_HELPER_DB,
// else app (trials that run side by side each have a database).
func helperDB() string {
	if db := os.Getenv("MONGOMIG_HELPER_DB"); db != "" {
		return db
	}
	return "app"
}

func helperUpWith(uri, killAt string, pause time.Duration) int {
	ctx := context.Background()
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r, err := runner.New(client.Database(helperDB()), os.DirFS("../../migrations"),
		runner.WithLockLease(time.Second), runner.WithLockWait(2*time.Minute))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if killAt != "" || pause > 0 {
		runner.SetHook(r, func(point string, version int64, i int) {
			if fmt.Sprintf("%s:%d:%d", point, version, i) == killAt {
				if os.Getenv("MONGOMIG_HELPER_SIGNAL") == "STOP" {
					// Pause right here, as a frozen VM or a long GC would;
					// the test resumes us with SIGCONT.
					_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
					// The stop reaches the process asynchronously: stay here
					// until it has, so the pause falls between two commands
					// and not between a fence check and its write (a window
					// the fence documents it cannot see).
					time.Sleep(200 * time.Millisecond)
					return
				}
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // the signal is on its way
			}
			time.Sleep(pause)
		})
	}
	applied, err := r.Up(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, runner.ErrLockTimeout) {
			return 4
		}
		return 1
	}
	fmt.Println(len(applied.Applied))
	_ = client.Disconnect(ctx)
	return 0
}

func helper(t *testing.T, uri, killAt string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MONGOMIG_HELPER_URI="+uri, "MONGOMIG_HELPER_KILL="+killAt)
	return cmd
}

// TestUpProcessesConcurrently starts several `up` processes at once: every
// one exits 0 and each migration is applied exactly once in total.
func TestUpProcessesConcurrently(t *testing.T) {
	srv := sandboxtest.Start(t)
	const procs = 5
	outs := make([]string, procs)
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for i := 0; i < procs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := helper(t, srv.URI(), "").CombinedOutput()
			outs[i], errs[i] = strings.TrimSpace(string(out)), err
		}()
	}
	wg.Wait()
	sum := 0
	for i := range outs {
		if errs[i] != nil {
			t.Errorf("process %d: %v: %s", i, errs[i], outs[i])
			continue
		}
		n, err := strconv.Atoi(outs[i])
		if err != nil {
			t.Errorf("process %d printed %q", i, outs[i])
		}
		sum += n
	}
	db := sandboxtest.Connect(t, srv.URI()).Database("app")
	if sum != 4 || !equalVersions(ledgerVersions(t, db), 1, 2, 3, 4) {
		t.Fatalf("applied %d times in total (want 4), ledger %v", sum, ledgerVersions(t, db))
	}
}

// TestKilledUpFinishesOnNextRun kills an `up` process inside a migration
// (after its first command) and between two migrations (right after one
// was recorded). The lock it leaves is taken over once its lease expires,
// and the next run applies what is missing, each migration recorded once.
func TestKilledUpFinishesOnNextRun(t *testing.T) {
	t.Parallel() // each case has a sandbox of its own
	for _, tc := range []struct {
		killAt     string
		ledgerLeft []int64
	}{
		{"command:2:0", []int64{1}},           // inside 0002, after its first command
		{"command:3:1", []int64{1, 2}},        // inside 0003, between its index drop and create
		{"recorded:2:0", []int64{1, 2}},       // between 0002 and 0003
		{"recorded:4:0", []int64{1, 2, 3, 4}}, // after the last, before releasing the lock
	} {
		t.Run(tc.killAt, func(t *testing.T) {
			t.Parallel()
			srv := sandboxtest.Start(t)
			err := helper(t, srv.URI(), tc.killAt).Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("helper was not killed: %v", err)
			}
			db := sandboxtest.Connect(t, srv.URI()).Database("app")
			if v := ledgerVersions(t, db); !equalVersions(v, tc.ledgerLeft...) {
				t.Fatalf("ledger after the kill = %v, want %v", v, tc.ledgerLeft)
			}
			r := newRunner(t, db, samples(t))
			if h, _, err := r.LockStatus(context.Background()); err != nil || h == nil {
				t.Fatalf("the killed process left no lock behind (%v): the test does not test takeover", err)
			}
			out, err := helper(t, srv.URI(), "").CombinedOutput()
			if err != nil {
				t.Fatalf("next run: %v: %s", err, out)
			}
			if want := strconv.Itoa(4 - len(tc.ledgerLeft)); strings.TrimSpace(string(out)) != want {
				t.Errorf("next run applied %s migrations, want %s", out, want)
			}
			if v := ledgerVersions(t, db); !equalVersions(v, 1, 2, 3, 4) {
				t.Fatalf("ledger after the next run = %v", v)
			}
			if h, _, _ := r.LockStatus(context.Background()); h != nil {
				t.Errorf("lock still held after a clean run: %v", h)
			}
		})
	}
}
