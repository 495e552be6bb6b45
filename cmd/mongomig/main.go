// Command mongomig is the MongoDB schema migration tool. See the README and
// docs/ for usage; everything lives in internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/mattn/go-isatty"

	"github.com/mongomig/mongomig/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], cli.Streams{
		In:            os.Stdin,
		Out:           os.Stdout,
		Err:           os.Stderr,
		OutIsTerminal: isTerminal(os.Stdout),
		ErrIsTerminal: isTerminal(os.Stderr),
	})
	stop()
	os.Exit(code)
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}
