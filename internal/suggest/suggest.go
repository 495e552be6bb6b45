// Package suggest finds the nearest known word to a misspelt one, for
// "did you mean" hints. It imports only the standard library, so the
// leaf packages (pkg/migration, pkg/validator) may use it without pulling
// anything into application binaries.
package suggest

import "strings"

// Closest returns the word of known nearest to got: a case-insensitive
// match, or one at an edit distance of at most 2. Of words equally near,
// the one sharing the longest prefix with got wins (--dri is --dir, not
// --uri, although each is one edit away), then the first in known. ok is
// false when none is that close.
func Closest(got string, known []string) (word string, ok bool) {
	best, bestDist, bestPrefix := "", 3, 0
	for _, k := range known {
		if strings.EqualFold(k, got) {
			return k, true
		}
		d, p := Distance(got, k), commonPrefix(got, k)
		if d < bestDist || (d == bestDist && p > bestPrefix) {
			best, bestDist, bestPrefix = k, d, p
		}
	}
	return best, best != ""
}

// commonPrefix is the length in bytes of the prefix a and b share.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// Distance is the edit distance between a and b, in bytes: insertions,
// deletions, substitutions and swaps of two adjacent bytes count one each
// (the optimal string alignment distance), so a swap, the commonest typo
// ("dri" for "dir"), is as near as one wrong letter.
func Distance(a, b string) int {
	// rows i-2, i-1 and i of the table.
	prev2 := make([]int, len(b)+1)
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
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
