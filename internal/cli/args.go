package cli

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// flagsFirst moves the flags written after a command's arguments before
// them: urfave/cli v2 (the flag package) stops reading flags at the first
// argument, so `create "invoice status" --json` would otherwise take
// --json as a second name. Everything after "--" stays an argument, as do
// the values of flags that take one (`--to 7`). Arguments before the
// command, and a command urfave/cli does not know, are left as they are.
func flagsFirst(app *cli.App, args []string) []string {
	i := skipFlags(app.Flags, args, 0)
	if i >= len(args) {
		return args
	}
	cmd := app.Command(args[i])
	if cmd == nil {
		return args
	}
	// A command with subcommands (sandbox serve): the flags after the
	// subcommand are its own.
	if len(cmd.Subcommands) > 0 {
		j := skipFlags(cmd.Flags, args, i+1)
		if j >= len(args) || cmd.Command(args[j]) == nil {
			return args
		}
		i, cmd = j, cmd.Command(args[j])
	}
	out := append([]string{}, args[:i+1]...)
	var positional []string
	dashes := false
	for j := i + 1; j < len(args); j++ {
		a := args[j]
		switch {
		case a == "--":
			// The arguments before it and after it, behind one "--".
			dashes = true
			positional = append(positional, args[j+1:]...)
			j = len(args)
		case isFlag(a):
			out = append(out, a)
			if takesValue(cmd.Flags, a) && j+1 < len(args) {
				j++
				out = append(out, args[j])
			}
		default:
			positional = append(positional, a)
		}
	}
	if dashes {
		out = append(out, "--")
	}
	return append(out, positional...)
}

// skipFlags returns the index of the first argument from i on that is
// not a flag of flags or a flag's value.
func skipFlags(flags []cli.Flag, args []string, i int) int {
	for i < len(args) && isFlag(args[i]) && args[i] != "--" {
		if takesValue(flags, args[i]) {
			i++
		}
		i++
	}
	return i
}

func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' }

// takesValue reports whether arg (`--name`, `-name`) is a flag of flags
// that reads the next argument as its value: not a boolean, and not
// written `--name=value`. An unknown flag takes none.
func takesValue(flags []cli.Flag, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if strings.Contains(name, "=") {
		return false
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}
