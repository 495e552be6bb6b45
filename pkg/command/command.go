// Package command builds a mongomig binary that knows an application's Go
// upgrade functions, so lint, demo and (later) backfill and validate can run
// `func:` steps — the same idea as goose's custom binaries.
//
//	func main() {
//		command.Main(version.WithFunc("splitName", users.SplitName))
//	}
//
// The binary is the full mongomig command line, sandbox included; link this
// package into a tool, never into the application itself (which imports
// only pkg/version).
package command

import (
	"context"
	"os"
	"os/signal"

	"github.com/mattn/go-isatty"

	"github.com/mongomig/mongomig/internal/cli"
	"github.com/mongomig/mongomig/pkg/version"
)

// Main runs mongomig with the process's arguments and streams and exits
// with its exit code. opts are given to every version registry the
// commands build.
func Main(opts ...version.Option) {
	os.Exit(Run(os.Args[1:], opts...))
}

// Run runs mongomig with args (without the program name) on the process's
// streams and returns the exit code; Ctrl-C cancels it cleanly.
func Run(args []string, opts ...version.Option) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return cli.Run(ctx, args, cli.Streams{
		In:            os.Stdin,
		Out:           os.Stdout,
		Err:           os.Stderr,
		OutIsTerminal: isTerminal(os.Stdout),
		ErrIsTerminal: isTerminal(os.Stderr),
	}, cli.Config{VersionOptions: opts})
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}
