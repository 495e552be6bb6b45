// Command mongomig is the MongoDB schema migration tool. See the README and
// docs/ for usage. It is pkg/command plus the embedded sandbox (--embedded,
// demo), which a team's own binary built on pkg/command leaves out.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/mongomig/mongomig/internal/sandbox"
	"github.com/mongomig/mongomig/pkg/command"
)

func main() { program().Main() }

func program() command.Program {
	return command.Program{Embedded: startSandbox}
}

// startSandbox starts the embedded FerretDB server storing its data in dir.
func startSandbox(_ context.Context, dir string) (string, func(context.Context) error, error) {
	// A repair of what a killed process left in dir is worth one line.
	notify := func(msg string) { fmt.Fprintln(os.Stderr, "note:", msg) }
	srv, err := sandbox.Start(sandbox.Options{Dir: dir, Notify: notify})
	if errors.Is(err, sandbox.ErrDirInUse) {
		return "", nil, inUse{err}
	}
	if err != nil {
		return "", nil, err
	}
	return srv.URI(), srv.Stop, nil
}

// inUse is the sandbox's ErrDirInUse, with its message, that also reports
// itself as command.ErrEmbeddedInUse (exit 4).
type inUse struct{ error }

func (e inUse) Is(target error) bool { return target == command.ErrEmbeddedInUse }
func (e inUse) Unwrap() error        { return e.error }
