package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/fatih/color"
)

// Streams are the process's standard streams, injected so tests can use
// buffers and pretend to be, or not be, a terminal.
type Streams struct {
	In            io.Reader
	Out, Err      io.Writer
	OutIsTerminal bool
	ErrIsTerminal bool
}

// output renders results on stdout and messages on stderr.
type output struct {
	out, err io.Writer
	json     bool
	// color and errColor say whether stdout and stderr get colour.
	color, errColor bool
}

// useColor applies the colour rules: never with --no-color, never when
// NO_COLOR is set to anything (even empty), never when the stream is not a
// terminal.
func useColor(noColorFlag, noColorEnvSet, isTerminal bool) bool {
	return !noColorFlag && !noColorEnvSet && isTerminal
}

func (o *output) paint(attr color.Attribute, s string) string {
	return paint(o.color, attr, s)
}

func paint(on bool, attr color.Attribute, s string) string {
	if !on {
		return s
	}
	c := color.New(attr)
	c.EnableColor()
	return c.Sprint(s)
}

func (o *output) red(s string) string    { return o.paint(color.FgRed, s) }
func (o *output) yellow(s string) string { return o.paint(color.FgYellow, s) }
func (o *output) green(s string) string  { return o.paint(color.FgGreen, s) }
func (o *output) bold(s string) string   { return o.paint(color.Bold, s) }
func (o *output) faint(s string) string  { return o.paint(color.Faint, s) }

func (o *output) printf(format string, a ...any) { fmt.Fprintf(o.out, format, a...) }

// warnf writes a warning to stderr.
func (o *output) warnf(format string, a ...any) {
	fmt.Fprintf(o.err, "%s %s\n", paint(o.errColor, color.FgYellow, "warning:"), fmt.Sprintf(format, a...))
}

// writeJSON writes v as indented JSON on stdout.
func (o *output) writeJSON(v any) error {
	enc := json.NewEncoder(o.out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
