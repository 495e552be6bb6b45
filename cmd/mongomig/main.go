// Command mongomig is the MongoDB schema migration tool. See the README and
// docs/ for usage; everything lives in internal/cli (via pkg/command, which
// teams also use to build a mongomig that knows their Go upgrade functions).
package main

import "github.com/mongomig/mongomig/pkg/command"

func main() { command.Main() }
