package runner

import (
	"fmt"
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

// serverMessage is err's first line without the server's internals, for
// a message that quotes what the server answered.
func serverMessage(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return TrimServerInternals(s)
}

// commandFailure is what a failed command's error says of the server's
// answer: serverMessage, except for a unique index that cannot be built
// because documents share a key, which is said in mongomig's words with
// the way to list them (up's dry run predicts its builds; down's does not).
// MongoDB answers DuplicateKey ("E11000 duplicate
// key error ...", jstests/core/uniqueness.js), whose text is kept for the
// key it quotes; FerretDB v1 answers code 1 with SQLite's "UNIQUE
// constraint failed: index 'customers_c09344de_mail_1' (2067)"
// (serverCode), dropped: it names a table, not the index.
func commandFailure(err error, c Command, direction string) string {
	if c.Name != "createIndexes" || serverCode(err) != codeDuplicateKey {
		return serverMessage(err)
	}
	msg := fmt.Sprintf("index %s on %s cannot be built: documents share a key", c.Index, c.Collection)
	if direction == "up" {
		msg += " (run `mongomig up --dry-run` to list them)"
	}
	if hasCode(err, codeDuplicateKey) {
		msg += "; the server: " + serverMessage(err)
	}
	return msg
}
