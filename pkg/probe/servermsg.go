package probe

import (
	"regexp"
	"strings"
)

// goFrame is one of FerretDB's error-chain frames, such as
// "[msg_update.go:133 handler.(*Handler).updateDocument] ".
var goFrame = regexp.MustCompile(`\[[A-Za-z0-9_./-]+\.go:\d+ [^\]\s]*\] ?`)

// goPointer is a Go pointer value, such as 0xc000123456.
var goPointer = regexp.MustCompile(` ?\b0x[0-9a-f]{6,}\b`)

// TrimServerInternals removes what a server leaks of its implementation
// from a message: FerretDB's Go stack frames ("[update.go:114
// common.UpdateDocument] ") and Go value dumps ("with value &{map[...]
// [{0xc000... $jsonSchema}] false 0}"). The rest of the message, its lines
// and their indentation stay.
func TrimServerInternals(msg string) string {
	msg = goFrame.ReplaceAllString(msg, "")
	for {
		i := strings.Index(msg, "&{")
		if i < 0 {
			break
		}
		end := matchingBrace(msg, i+1)
		start := i
		switch {
		case strings.HasSuffix(msg[:i], " with value "):
			start = i - len(" with value ")
		case strings.HasSuffix(msg[:i], " ") && strings.HasPrefix(msg[end:], " "):
			start = i - 1
		}
		msg = msg[:start] + msg[end:]
	}
	lines := strings.Split(goPointer.ReplaceAllString(msg, ""), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// matchingBrace returns the index just past the brace that closes the one
// at open (the end of s when it is not closed).
func matchingBrace(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// ServerMessage is err's first line without the server's internals, for
// a message that quotes what the server answered.
func ServerMessage(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return TrimServerInternals(s)
}
