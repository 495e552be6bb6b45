package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/runner"
)

// debugEnv set to 1 adds the stack of a recovered panic to its message.
const debugEnv = "MONGOMIG_DEBUG"

// panicError is a panic recovered from a command: its value, and the
// stack where it was raised.
type panicError struct {
	value any
	stack []byte
}

// Error is one line: a multi-line panic value is joined.
func (e *panicError) Error() string {
	value := strings.ReplaceAll(fmt.Sprint(e.value), "\n", " ")
	return "internal error: " + value + "; this is a bug in mongomig or in a func step: please report it with the command you ran"
}

// runRecovered runs the app on args; a panic in a command (on this
// goroutine) becomes a *panicError instead of a Go stack trace, which can
// quote document values or a connection string, and so does one the
// runner recovered in a goroutine of its own (a *runner.PanicError). The
// command's deferred cleanups (the lock's release) have run by the time
// it returns.
func runRecovered(ctx context.Context, app *cli.App, args []string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{value: p, stack: debug.Stack()}
		}
	}()
	err = app.RunContext(ctx, append([]string{"mongomig"}, args...))
	var rp *runner.PanicError
	if errors.As(err, &rp) {
		err = &panicError{value: fmt.Sprintf("in %s: %v", rp.Where, rp.Value), stack: rp.Stack}
	}
	return err
}

// anyURI is a connection string quoted in free text.
var anyURI = regexp.MustCompile(`mongodb(\+srv)?://[^\s"'<>]+`)

// render is the panic's message and, when MONGOMIG_DEBUG=1, its stack
// (else ""), fit to print: the secrets of the configured URI (uri) and of
// any connection string they quote removed, control characters escaped.
func (e *panicError) render(uri string) (msg, stack string) {
	clean := func(text string) string {
		return cleanMessage(anyURI.ReplaceAllStringFunc(text, redactURI), uri)
	}
	if os.Getenv(debugEnv) == "1" {
		stack = clean(string(e.stack))
	}
	return clean(e.Error()), stack
}
