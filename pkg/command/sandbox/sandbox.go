// Package sandbox adds the embedded sandbox server (FerretDB v1 with SQLite
// storage, running inside the process) to a team's own mongomig binary:
// the global --embedded DIR flag, demo, and `mongomig sandbox serve`, which
// serves it to an application or another tool.
//
//	func main() {
//		p := command.Program{VersionOptions: []version.Option{version.WithFunc("splitName", users.SplitName)}}
//		sandbox.With(p).Main()
//	}
//
// It is opt-in on purpose: the server adds tens of megabytes to a binary.
// A binary that imports only pkg/command links none of it; import this
// package in a binary for trying migrations and func steps on your own
// data (a developer's or CI's), not necessarily in the one that migrates
// production.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/mongomig/mongomig/internal/sandbox"
	"github.com/mongomig/mongomig/pkg/command"
)

// With returns p with the sandbox: [Embedded] for --embedded and demo,
// [Serve] for `mongomig sandbox serve`.
func With(p command.Program) command.Program {
	p.Embedded, p.Serve = Embedded, Serve
	return p
}

// Embedded starts the sandbox storing its data in dir, listening on a free
// loopback port: [command.Program]'s Embedded. Another process serving dir
// is an error wrapping [command.ErrEmbeddedInUse] (exit 4).
func Embedded(ctx context.Context, dir string) (uri string, stop func(context.Context) error, err error) {
	return Serve(ctx, dir, "")
}

// Serve starts the sandbox storing its data in dir (empty: a temporary
// directory, removed on stop) and listening on addr (host:port; empty or
// port 0: a free loopback port): [command.Program]'s Serve. The URI it
// returns names no database.
func Serve(_ context.Context, dir, addr string) (uri string, stop func(context.Context) error, err error) {
	// A repair of what a killed process left in dir is worth one line.
	notify := func(msg string) { fmt.Fprintln(os.Stderr, "note:", msg) }
	srv, err := sandbox.Start(sandbox.Options{Dir: dir, Addr: addr, Notify: notify})
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
