package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// The script commands of this file (see TestScripts):
//
//	gobuild PKG BIN      go build the repository's package PKG (./examples/custom-mongomig, a
//	                     team's own binary) into BIN in the script's directory
//	bg VAR PROG ARGS...  start PROG in the background (mongomig sandbox serve), wait for the
//	                     first line it prints on stdout and set VAR to it; PROG is stopped with
//	                     SIGINT at stopbg or at the end of the script; several may run at once
//	stopbg [VAR]         stop the bg program started with VAR (without VAR: the last one
//	                     started) with SIGINT and require exit 0; its stdout and stderr become
//	                     those stdout and stderr check
var scriptTeamCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"gobuild": cmdGoBuild,
	"bg":      cmdBg,
	"stopbg":  cmdStopBg,
}

func cmdGoBuild(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gobuild PKG BIN")
	}
	if _, err := exec.LookPath("go"); err != nil {
		ts.Fatalf("gobuild: the go command is not on PATH: no team binary can be built")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		ts.Fatalf("gobuild: %v", err)
	}
	cmd := exec.Command("go", "build", "-o", ts.MkAbs(args[1]), "./"+strings.TrimPrefix(args[0], "./"))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		ts.Fatalf("go build %s: %v\n%s", args[0], err, out)
	}
}

// bgProc is the program bg started.
type bgProc struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr syncBuffer
	done   chan error
}

// syncBuffer is a bytes.Buffer a process writes while the script reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func cmdBg(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: bg VAR PROG ARGS...")
	}
	if _, running := bgProcs.Load(bgKey{ts, args[0]}); running {
		ts.Fatalf("bg: a program is running already for %s: stopbg %s first", args[0], args[0])
	}
	path, err := exec.LookPath(args[1])
	if err != nil {
		ts.Fatalf("bg: %v", err)
	}
	p := &bgProc{cmd: exec.Command(path, args[2:]...), done: make(chan error, 1)}
	p.cmd.Dir = ts.MkAbs(".")
	p.cmd.Env = scriptEnv(ts)
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		ts.Fatalf("bg: %v", err)
	}
	if err := p.cmd.Start(); err != nil {
		ts.Fatalf("bg: %v", err)
	}
	r := bufio.NewReader(out)
	first, err := r.ReadString('\n')
	if err != nil {
		_ = p.cmd.Process.Kill()
		ts.Fatalf("bg %s: no line on stdout (%v); stderr:\n%s", strings.Join(args[1:], " "), err, p.stderr.String())
	}
	p.stdout.WriteString(first)
	go func() {
		_, _ = p.stdout.ReadFrom(r)
		p.done <- p.cmd.Wait()
	}()
	ts.Setenv(args[0], strings.TrimSpace(first))
	ts.Defer(func() {
		_ = p.cmd.Process.Signal(syscall.SIGINT)
		<-p.done
	})
	bgProcs.Store(bgKey{ts, args[0]}, p)
	last, _ := bgLast.Load(ts)
	stack, _ := last.([]string)
	bgLast.Store(ts, append(stack, args[0]))
}

// bgProcs holds each script's bg programs by their VAR, and bgLast the
// VARs in the order started (testscript keeps no values for commands).
var bgProcs, bgLast sync.Map

type bgKey struct {
	ts *testscript.TestScript
	vr string
}

func cmdStopBg(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 {
		ts.Fatalf("usage: stopbg [VAR]")
	}
	last, _ := bgLast.Load(ts)
	stack, _ := last.([]string)
	name := ""
	if len(args) == 1 {
		name = args[0]
	} else if len(stack) > 0 {
		name = stack[len(stack)-1]
	}
	for i, n := range stack {
		if n == name {
			bgLast.Store(ts, append(stack[:i:i], stack[i+1:]...))
			break
		}
	}
	v, ok := bgProcs.LoadAndDelete(bgKey{ts, name})
	if !ok {
		ts.Fatalf("stopbg: no bg program is running")
	}
	p := v.(*bgProc)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		ts.Fatalf("stopbg: %v", err)
	}
	err := <-p.done
	p.done <- err // for the deferred stop
	ts.Stdout().Write(p.stdout.Bytes())
	ts.Stderr().Write([]byte(p.stderr.String()))
	if err != nil {
		ts.Fatalf("%s: %v\n%s", strings.Join(p.cmd.Args, " "), err, p.stderr.String())
	}
}

// scriptEnv is the process environment with the script's values of the
// variables mongomig reads.
func scriptEnv(ts *testscript.TestScript) []string {
	env := os.Environ()
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "WORK", "MONGOMIG_URI", "MONGOMIG_DB", "MONGOMIG_DIR", "MONGOMIG_EMBEDDED", "NO_COLOR"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}
