// Command mongomig is the MongoDB schema migration tool. See the README and
// docs/ for usage. It is pkg/command plus the embedded sandbox (--embedded,
// demo, sandbox serve) of pkg/command/sandbox, which a team's own binary
// built on pkg/command alone leaves out.
package main

import (
	"github.com/mongomig/mongomig/pkg/command"
	"github.com/mongomig/mongomig/pkg/command/sandbox"
)

func main() { program().Main() }

func program() command.Program {
	return sandbox.With(command.Program{})
}
