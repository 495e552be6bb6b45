package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// checkFlagValues refuses a flag that takes a value followed by another
// known flag instead (`--uri --dir .`, what `--uri $MONGOMIG_URI --dir .`
// becomes when $MONGOMIG_URI is unquoted and empty): the flag package would take
// --dir as the URI and "." as the command. Everything after "--" is an
// argument.
func checkFlagValues(app *cli.App, args []string) error {
	flags := app.Flags
	var cmd *cli.Command
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return nil
		case !isFlag(a):
			// A command (or subcommand) brings its flags; another argument
			// changes nothing.
			next := app.Command(a)
			if cmd != nil {
				next = cmd.Command(a)
			}
			if next != nil {
				cmd, flags = next, append(append([]cli.Flag{}, app.Flags...), next.Flags...)
			}
		case takesValue(flags, a) && i+1 < len(args):
			if v := args[i+1]; isFlag(v) && knownFlag(flags, v) {
				name := "--" + flagName(a)
				return usageError(fmt.Errorf("%s needs a value: it is followed by %s (an unquoted variable that is empty, as in %s $VAR, leaves nothing between them); give the value, or write %s= for an empty one",
					name, v, name, name))
			}
			i++
		}
	}
	return nil
}

// flagName is arg's flag name without dashes.
func flagName(arg string) string { return strings.TrimLeft(arg, "-") }

// knownFlag reports whether arg (`--name`, `-name`, `--name=value`) names
// one of flags.
func knownFlag(flags []cli.Flag, arg string) bool {
	name, _, _ := strings.Cut(flagName(arg), "=")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}
