package sandbox_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/internal/sandbox"
)

// TestMain lets the test binary serve as a second process holding a
// sandbox directory (TestOneProcessPerDirectory), or writing to one until
// it is killed (TestKillLeavesAUsableDirectory).
func TestMain(m *testing.M) {
	if dir := os.Getenv("SANDBOX_KILL_WRITER"); dir != "" {
		os.Exit(killWriter(dir))
	}
	if dir := os.Getenv("SANDBOX_LOCK_HOLDER"); dir != "" {
		s, err := sandbox.Start(sandbox.Options{Dir: dir})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("ready")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
		_ = s.Stop(context.Background())
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestOneServerPerDirectory: a second Start on a directory a server
// serves, in this process, fails naming the holder; once the first stops,
// the directory is free again.
func TestOneServerPerDirectory(t *testing.T) {
	dir := t.TempDir()
	s1, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sandbox.Start(sandbox.Options{Dir: dir})
	want := "process " + strconv.Itoa(os.Getpid()) + " (this one) serves " + dir
	if !errors.Is(err, sandbox.ErrDirInUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("second Start: %v, want ErrDirInUse naming %q", err, want)
	}
	if err := s1.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	s2, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		t.Fatalf("Start after Stop: %v", err)
	}
	_ = s2.Stop(context.Background())
}

// TestOneProcessPerDirectory: while another process serves the
// directory, Start fails naming that process's pid; when the process is
// killed (no Stop), the kernel releases its lock and Start succeeds.
func TestOneProcessPerDirectory(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SANDBOX_LOCK_HOLDER="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("holder: %q", line)
	}
	_, err = sandbox.Start(sandbox.Options{Dir: dir})
	if want := "process " + strconv.Itoa(cmd.Process.Pid) + " serves " + dir; !errors.Is(err, sandbox.ErrDirInUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Start beside another process: %v, want %q", err, want)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	s, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		t.Fatalf("Start after the holder was killed: %v", err)
	}
	_ = s.Stop(context.Background())
}
