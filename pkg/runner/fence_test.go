package runner_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/lease"
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
// without sending its next command (it used to send its
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

// commandLog records the commands a client starts.
type commandLog struct {
	mu   sync.Mutex
	cmds []bson.Raw
}

func (l *commandLog) monitor() *options.ClientOptions {
	return options.Client().SetMonitor(&event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.cmds = append(l.cmds, e.Command)
	}})
}

func (l *commandLog) all() []bson.Raw {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]bson.Raw(nil), l.cmds...)
}

// TestLedgerTimeFenceOnlyWithoutTransactions: on a server without
// transactions (the sandbox) up says once that the ledger write is fenced
// by time only, and sends no transaction.
func TestLedgerTimeFenceOnlyWithoutTransactions(t *testing.T) {
	srv := sandboxtest.Start(t)
	log := &commandLog{}
	db := sandboxtest.Connect(t, srv.URI(), log.monitor()).Database("app")
	notices := 0
	r := newRunner(t, db, samples(t), runner.WithLogger(events.LoggerFunc(func(e events.Entry) {
		if _, ok := e.(events.LedgerFenceOnly); ok {
			notices++
		}
	})))
	if _, err := r.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
	if notices != 1 {
		t.Errorf("%d notices that the ledger is fenced by time only, want 1", notices)
	}
	for _, c := range log.all() {
		if _, err := c.LookupErr("startTransaction"); err == nil {
			t.Errorf("sent a transaction to a server without them: %s", c)
		}
	}
}

// TestLedgerTransactionCommands forces the transactional ledger write on
// the sandbox, which refuses startTransaction (FailedToParse): the
// commands up sends are pinned. The transaction's first statement
// increments fencedWrites on the lock document matched on this
// acquisition's token (a write, so that it conflicts with a takeover's
// delete; see pkg/lease), with snapshot read concern; the abort carries
// majority write concern; and the ledger insert is never sent outside it.
// TestLedgerTransactionMongoDB sees the whole transaction commit.
func TestLedgerTransactionCommands(t *testing.T) {
	srv := sandboxtest.Start(t)
	log := &commandLog{}
	db := sandboxtest.Connect(t, srv.URI(), log.monitor()).Database("app")
	_, err := newRunner(t, db, samples(t), runner.WithTransactions()).Up(context.Background())
	if err == nil || !strings.Contains(err.Error(), "record 0001_create_users.yaml in the ledger") {
		t.Fatalf("up with a forced transaction on the sandbox: %v", err)
	}
	var start, abort bson.Raw
	for _, c := range log.all() {
		switch name := c.Index(0).Key(); {
		case name == "insert" && c.Lookup("insert").StringValue() == runner.DefaultLedgerCollection:
			t.Errorf("the ledger insert was sent although its transaction failed: %s", c)
		case name == "abortTransaction":
			abort = c
		case c.Lookup("startTransaction").Type != 0:
			if start != nil {
				t.Errorf("a second transaction: %s", c)
			}
			start = c
		}
	}
	if start == nil {
		t.Fatal("no transaction was started")
	}
	u := start.Lookup("updates").Array().Index(0).Document()
	if start.Lookup("update").StringValue() != runner.DefaultLockCollection ||
		u.Lookup("q", "_id").StringValue() != "mongomig" || u.Lookup("q", "token").Type != bson.TypeString ||
		u.Lookup("u", "$inc", "fencedWrites").AsInt64() != 1 ||
		!start.Lookup("startTransaction").Boolean() || start.Lookup("autocommit").Boolean() ||
		start.Lookup("readConcern", "level").StringValue() != "snapshot" || start.Lookup("txnNumber").Type == 0 {
		t.Errorf("the transaction's first command: %s", start)
	}
	if abort == nil || abort.Lookup("writeConcern", "w").StringValue() != "majority" || !abort.Lookup("txnNumber").Equal(start.Lookup("txnNumber")) {
		t.Errorf("abortTransaction of the refused transaction: %s", abort)
	}
	if v := ledgerVersions(t, db); len(v) != 0 {
		t.Errorf("ledger = %v", v)
	}
}

// TestLedgerTransactionMongoDB: on a MongoDB replica set or sharded
// cluster each ledger insert runs in a transaction whose first statement
// updates the lock document matched on the token, committed with majority
// write concern, and no notice about a time-only fence is given.
func TestLedgerTransactionMongoDB(t *testing.T) {
	uri := os.Getenv("MONGOMIG_TEST_URI")
	if uri == "" {
		t.Skip("MONGOMIG_TEST_URI is not set: TestLedgerTransactionCommands pins the commands on the sandbox")
	}
	log := &commandLog{}
	db := sandboxtest.Connect(t, uri, log.monitor()).Database("mongomig_ledger_txn")
	_ = db.Drop(context.Background())
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	ok, err := lease.Transactions(context.Background(), db)
	if err != nil {
		t.Fatalf("probe transactions: %v", err)
	}
	if !ok {
		t.Skip("the server has no multi-document transactions (hello names no replica set or mongos with sessions): the time fence is its guarantee")
	}
	notices := 0
	r := newRunner(t, db, samples(t), runner.WithLogger(events.LoggerFunc(func(e events.Entry) {
		if _, ok := e.(events.LedgerFenceOnly); ok {
			notices++
		}
	})))
	if _, err := r.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
	cmds := log.all()
	inserts := 0
	for i, c := range cmds {
		if c.Index(0).Key() != "insert" || c.Lookup("insert").StringValue() != runner.DefaultLedgerCollection {
			continue
		}
		inserts++
		txn := c.Lookup("txnNumber")
		if txn.Type == 0 || c.Lookup("autocommit").Boolean() || i == 0 {
			t.Fatalf("ledger insert outside a transaction: %s", c)
		}
		first, commit := cmds[i-1], bson.Raw(nil)
		for _, d := range cmds[i+1:] {
			if d.Index(0).Key() == "commitTransaction" && d.Lookup("txnNumber").Equal(txn) {
				commit = d
				break
			}
		}
		if first.Lookup("update").StringValue() != runner.DefaultLockCollection || !first.Lookup("startTransaction").Boolean() || !first.Lookup("txnNumber").Equal(txn) {
			t.Errorf("the statement before the ledger insert: %s", first)
		}
		if commit == nil || commit.Lookup("writeConcern", "w").StringValue() != "majority" {
			t.Errorf("commit of the ledger transaction: %s", commit)
		}
	}
	if inserts != 4 || notices != 0 || !equalVersions(ledgerVersions(t, db), 1, 2, 3, 4) {
		t.Errorf("%d ledger inserts, %d time-fence notices, ledger %v", inserts, notices, ledgerVersions(t, db))
	}
}
