package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
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
// server failure. The command it says to run again keeps --to: bare `up`
// would apply more than asked, bare `down` revert less.
func TestSIGTERMWhileWaitingForTheLock(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"up"}, "interrupted before anything was applied; run `mongomig up` again to continue"},
		{[]string{"up", "--to", "2"}, "interrupted before anything was applied; run `mongomig up --to 2` again to continue"},
		{[]string{"down", "--to", "0"}, "interrupted before anything was reverted; run `mongomig down --to 0` again to continue"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			stderr := sigtermWhileLocked(t, c.args...)
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr:\n%s\nwant %q", stderr, c.want)
			}
		})
	}
}

// sigtermWhileLocked runs mongomig args against a sandbox whose migration
// lock another process holds, sends SIGTERM once it waits, requires exit
// 130 and returns its stderr.
func sigtermWhileLocked(t *testing.T, args ...string) string {
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
	cmd := mongomigProcess(t, "../..", nil, append(append([]string{"--uri", strings.TrimSuffix(srv.URI(), "/") + "/app"}, args...), "--lock-wait", "2m")...)
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
	return stderr.String()
}

// holdingProxy forwards a client's connections to backend, but holds the
// first message that contains marker (a command name) until release is
// closed: a client that sent it is stopped right there, between two
// commands of its own, for as long as a test needs.
type holdingProxy struct {
	ln      net.Listener
	backend string
	marker  []byte
	held    chan struct{} // closed when the marker was seen
	release chan struct{}
	once    sync.Once
}

func startHoldingProxy(t *testing.T, backend, marker string) *holdingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &holdingProxy{ln: ln, backend: backend, marker: append([]byte(marker), 0), held: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *holdingProxy) serve(c net.Conn) {
	defer c.Close()
	b, err := net.Dial("tcp", p.backend)
	if err != nil {
		return
	}
	defer b.Close()
	go func() { _, _ = io.Copy(c, b) }()
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		msg := make([]byte, binary.LittleEndian.Uint32(hdr[:]))
		copy(msg, hdr[:])
		if _, err := io.ReadFull(c, msg[4:]); err != nil {
			return
		}
		if bytes.Contains(msg, p.marker) {
			first := false
			p.once.Do(func() { first = true; close(p.held) })
			if first {
				<-p.release
			}
		}
		if _, err := b.Write(msg); err != nil {
			return
		}
	}
}

// TestSIGTERMReleasesTheLock: `mongomig up` holding the lock (its lease an
// hour) gets SIGTERM while a createIndexes of its first migration is on
// its way: it finishes that command, stops at the next safe point (exit
// 130) and deletes its lease document, so a second `up` that may not wait
// at all (--lock-wait 0, exit 4 if the lock were held) starts at once and
// finishes the run.
func TestSIGTERMReleasesTheLock(t *testing.T) {
	srv := sandboxtest.Start(t)
	u, err := url.Parse(srv.URI())
	if err != nil {
		t.Fatal(err)
	}
	p := startHoldingProxy(t, u.Host, "createIndexes")
	first := mongomigProcess(t, "../..", nil, "--uri", "mongodb://"+p.ln.Addr().String()+"/app", "up", "--lock-lease", "1h")
	var stderr bytes.Buffer
	first.Stderr = &stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.held:
	case <-time.After(2 * time.Minute):
		_ = first.Process.Kill()
		t.Fatalf("up never sent createIndexes: %s", stderr.String())
	}
	if err := first.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	close(p.release)
	if code := exitCodeOf(first.Wait()); code != 130 || !strings.Contains(stderr.String(), "run `mongomig up` again to continue") {
		t.Fatalf("the interrupted up: exit %d, want 130\n%s", code, stderr.String())
	}
	db := sandboxtest.Connect(t, srv.URI()).Database("app")
	if n, err := db.Collection("mongomig_lock").CountDocuments(context.Background(), bson.D{}); err != nil || n != 0 {
		t.Fatalf("%d lease documents left after SIGTERM (%v): the lock was not released", n, err)
	}
	out, err := mongomigProcess(t, "../..", nil, "--uri", strings.TrimSuffix(srv.URI(), "/")+"/app", "up", "--lock-wait", "0").CombinedOutput()
	if err != nil {
		t.Fatalf("the next up (exit %d): %s", exitCodeOf(err), out)
	}
	var versions []int64
	cur, err := db.Collection("mongomig_migrations").Find(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	for cur.Next(context.Background()) {
		versions = append(versions, cur.Current.Lookup("_id").AsInt64())
	}
	if len(versions) != 4 {
		t.Errorf("ledger after both runs: %v, want the four sample migrations", versions)
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
