// Package command builds a mongomig binary that knows an application's Go
// upgrade functions, so lint, validate, backfill and down can run `func:`
// steps — the same idea as goose's custom binaries.
//
//	func main() {
//		command.Main(version.WithFunc("splitName", users.SplitName))
//	}
//
// Link this package into a tool, never into the application itself (which
// imports only pkg/version). A binary built this way links neither the
// embedded sandbox nor its storage engines: `--embedded` and `demo` answer
// that the binary was built without them (exit 2). The stock cmd/mongomig
// adds the sandbox with [Program.Embedded].
package command

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mattn/go-isatty"

	"github.com/mongomig/mongomig/internal/cli"
	"github.com/mongomig/mongomig/pkg/version"
)

// ErrEmbeddedInUse is what [Program.Embedded] wraps when another process
// already serves the directory.
var ErrEmbeddedInUse = cli.ErrEmbeddedInUse

// Program is a mongomig binary's configuration.
type Program struct {
	// VersionOptions are given to every version registry the commands
	// build (version.WithFunc registers a func step's Go function,
	// version.WithRunFunc a `go:` run operation's).
	VersionOptions []version.Option
	// Embedded starts an in-process MongoDB-compatible server storing its
	// data in dir, for --embedded and demo; nil leaves them out. An error
	// wrapping [ErrEmbeddedInUse] (another process serves dir) exits with
	// the lock's exit code, 4.
	Embedded func(ctx context.Context, dir string) (uri string, stop func(context.Context) error, err error)
	// Serve starts the same server for other processes, for `mongomig
	// sandbox serve`: storing its data in dir (empty: a temporary
	// directory, removed on stop) and listening on addr (host:port; port
	// 0 picks a free one); nil leaves the command out (exit 2).
	// pkg/command/sandbox sets it with Embedded.
	Serve func(ctx context.Context, dir, addr string) (uri string, stop func(context.Context) error, err error)
}

// Main runs mongomig with the process's arguments and streams and exits
// with its exit code. opts are given to every version registry the
// commands build.
func Main(opts ...version.Option) {
	Program{VersionOptions: opts}.Main()
}

// Run runs mongomig with args (without the program name) on the process's
// streams and returns the exit code.
func Run(args []string, opts ...version.Option) int {
	return Program{VersionOptions: opts}.Run(args)
}

// Main runs the program with the process's arguments and exits with its
// exit code.
func (p Program) Main() {
	os.Exit(p.Run(os.Args[1:]))
}

// Run runs the program with args (without the program name) on the
// process's streams and returns the exit code. SIGINT, SIGTERM and SIGHUP
// (Ctrl-C, Kubernetes, CI, a closed terminal) stop it at the next safe
// point: between two commands sent to the server, with the lock released.
// A write to a closed pipe (`mongomig demo | head`) stops it the same way
// instead of killing it, so it still cleans up. A second signal is not
// caught: it ends the process at once.
func (p Program) Run(args []string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// SIGPIPE stays caught to the end: otherwise the next write to the
	// closed pipe would kill the process before it cleaned up.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	stops := make(chan os.Signal, 1)
	signal.Notify(stops, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(stops)
	go func() {
		select {
		case <-stops:
			signal.Stop(stops) // a second one ends the process
		case <-pipe:
		case <-ctx.Done():
		}
		cancel()
	}()
	return cli.Run(ctx, args, cli.Streams{
		In:            os.Stdin,
		Out:           os.Stdout,
		Err:           os.Stderr,
		OutIsTerminal: isTerminal(os.Stdout),
		ErrIsTerminal: isTerminal(os.Stderr),
	}, cli.Config{VersionOptions: p.VersionOptions, Embedded: p.Embedded, Serve: p.Serve})
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}
