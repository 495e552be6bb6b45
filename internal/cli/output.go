package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/mongomig/mongomig/pkg/probe"
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

// warnf writes a warning to stderr, without what a server leaks of its
// implementation (a warning often quotes the server).
func (o *output) warnf(format string, a ...any) {
	fmt.Fprintf(o.err, "%s %s\n", paint(o.errColor, color.FgYellow, "warning:"), display(probe.TrimServerInternals(fmt.Sprintf(format, a...))))
}

// writeJSON writes v as indented JSON on stdout, with <, > and & as
// they are (a rule's name holds "->"; nothing here is embedded in HTML).
func (o *output) writeJSON(v any) error {
	enc := json.NewEncoder(o.out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// cell is one table cell: its text and, optionally, how it is painted
// (colour does not count in the width).
type cell struct {
	text  string
	paint func(string) string
}

// table writes rows after indent, each column as wide as its widest cell
// and two spaces from the next; a line ends with its last non-empty cell,
// never with spaces.
func (o *output) table(indent string, rows [][]cell) {
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c.text))
		}
	}
	for _, row := range rows {
		last := len(row) - 1
		for last >= 0 && row[last].text == "" {
			last--
		}
		var b strings.Builder
		b.WriteString(indent)
		for i := 0; i <= last; i++ {
			text := row[i].text
			if row[i].paint != nil {
				text = row[i].paint(text)
			}
			b.WriteString(text)
			if i < last {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(row[i].text)+2))
			}
		}
		o.printf("%s\n", strings.TrimRight(b.String(), " "))
	}
}
