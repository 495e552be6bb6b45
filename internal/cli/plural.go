package cli

import (
	"fmt"
	"strings"
)

// count is n followed by noun ("document", "round trip", "index"), in the
// plural unless n is 1: the one place CLI output makes a number agree with
// its noun.
func count[N ~int | ~int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %s", n, plural(noun))
}

// plural is the English plural of noun (of its last word): batch ->
// batches, index -> indexes, entry -> entries, document -> documents.
func plural(noun string) string {
	switch {
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"), strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"):
		return noun + "es"
	case strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])):
		return noun[:len(noun)-1] + "ies"
	}
	return noun + "s"
}

// verb is the form of a verb that agrees with n things: many or one.
func verb[N ~int | ~int64](n N, many, one string) string {
	if n == 1 {
		return one
	}
	return many
}
