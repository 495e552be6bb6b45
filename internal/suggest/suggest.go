// Package suggest finds the nearest known word to a misspelt one, for
// "did you mean" hints. It imports only the standard library, so the
// leaf packages (pkg/migration, pkg/validator) may use it without pulling
// anything into application binaries.
package suggest

import "strings"

// Closest returns the word of known nearest to got: a case-insensitive
// match, or one at an edit distance of at most 2. ok is false when none is
// that close.
func Closest(got string, known []string) (word string, ok bool) {
	best, bestDist := "", 3
	for _, k := range known {
		if strings.EqualFold(k, got) {
			return k, true
		}
		if d := Distance(got, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best, best != ""
}

// Distance is the Levenshtein edit distance between a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
