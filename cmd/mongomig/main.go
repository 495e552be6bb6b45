// Command mongomig is the MongoDB schema migration tool. See the README and
// docs/ for usage. It is pkg/command plus the embedded sandbox (--embedded,
// demo), which a team's own binary built on pkg/command leaves out.
package main

import (
	"context"

	"github.com/mongomig/mongomig/internal/sandbox"
	"github.com/mongomig/mongomig/pkg/command"
)

func main() { program().Main() }

func program() command.Program {
	return command.Program{Embedded: startSandbox}
}

// startSandbox starts the embedded FerretDB server storing its data in dir.
func startSandbox(_ context.Context, dir string) (string, func(context.Context) error, error) {
	srv, err := sandbox.Start(sandbox.Options{Dir: dir})
	if err != nil {
		return "", nil, err
	}
	return srv.URI(), srv.Stop, nil
}
