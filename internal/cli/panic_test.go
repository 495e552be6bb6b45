package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/pkg/runner"
)

const internalErrorTail = "; this is a bug in mongomig or in a func step: please report it with the command you ran\n"

// panicky panics with a connection string that carries a password.
func panicky(context.Context, string) (string, func(context.Context) error, error) {
	panic("dial mongodb://admin:Hunter2Secret@db.example.com/app?authSource=admin\nfailed")
}

// TestPanicInACommandIsOneRedactedLine: a command that panics (here the
// embedded server's start) prints one line, the panic value with the
// connection string's password removed, no Go stack trace, and exits 70.
func TestPanicInACommandIsOneRedactedLine(t *testing.T) {
	t.Setenv(debugEnv, "")
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"--embedded", t.TempDir(), "info"},
		Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, Config{Embedded: panicky})
	want := "mongomig: internal error: dial mongodb://admin:***@db.example.com/app?authSource=admin failed" + internalErrorTail
	if code != ExitInternal || errb.String() != want {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 70 and:\n%s", code, errb.String(), want)
	}
}

// TestPanicStackOnlyWithDebug: MONGOMIG_DEBUG=1 adds the stack, redacted,
// after the same line.
func TestPanicStackOnlyWithDebug(t *testing.T) {
	t.Setenv(debugEnv, "1")
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"--embedded", t.TempDir(), "info"},
		Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, Config{Embedded: panicky})
	line, stack, _ := strings.Cut(errb.String(), "\n")
	if code != ExitInternal || !strings.HasPrefix(line, "mongomig: internal error: dial mongodb://admin:***@") ||
		!strings.Contains(stack, "goroutine ") || !strings.Contains(stack, "cli.panicky(") || strings.Contains(stack, "Hunter2Secret") {
		t.Fatalf("exit %d, stderr:\n%s", code, errb.String())
	}
}

// panickingWriter is an output stream whose Write panics, as a bug in
// the rendering would, quoting the password of the configured URI.
type panickingWriter struct{}

func (panickingWriter) Write([]byte) (int, error) {
	panic(errors.New("render: token Hunter2Secret in the way"))
}

// TestPanicRedactsTheConfiguredURIsSecrets: a panic whose value quotes the
// --uri password alone (not inside a connection string) prints it as ***.
func TestPanicRedactsTheConfiguredURIsSecrets(t *testing.T) {
	t.Setenv(debugEnv, "")
	var errb bytes.Buffer
	code := Run(context.Background(), []string{"--uri", "mongodb://admin:Hunter2Secret@db.example.com/app", "--dir", "../../migrations", "lint"},
		Streams{In: strings.NewReader(""), Out: panickingWriter{}, Err: &errb}, Config{})
	want := "mongomig: internal error: render: token *** in the way" + internalErrorTail
	if code != ExitInternal || errb.String() != want {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 70 and:\n%s", code, errb.String(), want)
	}
}

// workerPanic fails the way a runner call does when one of its goroutines
// panicked: the runner recovers it and returns a *runner.PanicError.
func workerPanic(context.Context, string) (string, func(context.Context) error, error) {
	return "", nil, fmt.Errorf("backfill users: %w", &runner.PanicError{Where: "backfill worker 2 of users", Value: "index out of range [3] with length 3", Stack: []byte("goroutine 7 [running]:\n")})
}

// TestWorkerPanicIsAnInternalError: a panic the runner recovered in a
// goroutine of its own is reported as one from the command's goroutine
// is: one line naming where, exit 70.
func TestWorkerPanicIsAnInternalError(t *testing.T) {
	t.Setenv(debugEnv, "")
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"--embedded", t.TempDir(), "info"},
		Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, Config{Embedded: workerPanic})
	want := "mongomig: internal error: in backfill worker 2 of users: index out of range [3] with length 3" + internalErrorTail
	if code != ExitInternal || errb.String() != want {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 70 and:\n%s", code, errb.String(), want)
	}
}
