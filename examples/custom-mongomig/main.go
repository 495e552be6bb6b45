// Command custom-mongomig is a team's own mongomig: the stock command line
// plus the Go upgrade functions its migrations name in `func:` steps.
//
//	go run ./examples/custom-mongomig --dir examples/custom-mongomig/migrations lint
//
// The stock binary can only warn that it cannot check the example of
// 0001_split_name.yaml; this one runs it.
package main

import (
	"github.com/mongomig/mongomig/examples/custom-mongomig/users"
	"github.com/mongomig/mongomig/pkg/command"
	"github.com/mongomig/mongomig/pkg/version"
)

func main() {
	command.Main(version.WithFunc("splitName", users.SplitName))
}
