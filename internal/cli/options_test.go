package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// optionsEnv is the env Run would build for --embedded dir --dir migs,
// without parsing a command line: a run function gets everything else
// from its options struct.
func optionsEnv(dir, migs string) (e *env, stdout, stderr *bytes.Buffer) {
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	e = &env{
		cfg:     Config{Embedded: startTestSandbox},
		streams: Streams{In: strings.NewReader(""), Out: stdout, Err: stderr},
		out:     &output{out: stdout, err: stderr},
		g:       globals{Embedded: dir, EmbeddedSource: "--embedded", URISource: "--uri", Dir: migs},
	}
	return e, stdout, stderr
}

// TestRunFuncsTakeOptions calls up, status and down with options structs
// and no cli.Context: --to, --check and --dry-run reach the runner from
// the struct alone.
func TestRunFuncsTakeOptions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, out, errb := optionsEnv(dir, "../../migrations")
	if err := e.runUp(ctx, upOptions{to: 2, toSet: true}); err != nil {
		t.Fatalf("runUp --to 2: %v\n%s", err, errb)
	}
	if !strings.Contains(out.String(), "the database is at version 2\n") {
		t.Fatalf("runUp --to 2 printed:\n%s", out)
	}

	e, out, errb = optionsEnv(dir, "../../migrations")
	err := e.runStatus(ctx, statusOptions{check: true})
	if exitCode(err) != ExitCheck || !strings.Contains(out.String(), "version 2 of 4 (2 pending, 0 drifted)") {
		t.Fatalf("runStatus check: exit %d (%v)\n%s%s", exitCode(err), err, out, errb)
	}
	e, out, errb = optionsEnv(dir, "../../migrations")
	if err := e.runStatus(ctx, statusOptions{}); err != nil {
		t.Fatalf("runStatus without check: %v\n%s", err, errb)
	}

	e, out, errb = optionsEnv(dir, "../../migrations")
	if err := e.runDown(ctx, downOptions{dryRun: true}); err != nil {
		t.Fatalf("runDown dry run: %v\n%s", err, errb)
	}
	if !strings.Contains(out.String(), "would revert 1 migration") {
		t.Fatalf("runDown dry run printed:\n%s", out)
	}
	e, out, _ = optionsEnv(dir, "../../migrations")
	if err := e.runStatus(ctx, statusOptions{}); err != nil || !strings.Contains(out.String(), "version 2 of 4") {
		t.Fatalf("the dry run changed something: %v\n%s", err, out)
	}
}

// TestRunUpLockOptions: the lock wait reaches the runner through
// openOptions, not a flag: with another process's lock held, a wait of 0
// fails at once with exit 4, naming the holder.
func TestRunUpLockOptions(t *testing.T) {
	dir := t.TempDir()
	holdLock(t, dir)
	e, _, errb := optionsEnv(dir, "../../migrations")
	err := e.runUp(context.Background(), upOptions{open: openOptions{lock: &lockOptions{wait: 0, lease: 30 * time.Second}}})
	if exitCode(err) != ExitLock || !strings.Contains(err.Error(), "held by other-process") {
		t.Fatalf("runUp with the lock held and no wait: exit %d (%v)\n%s", exitCode(err), err, errb)
	}
}
