package suggest

import "strings"

// Name returns the name of known that got was most likely meant as, for
// names a user chooses (collections), where two real names are often two
// edits apart ("tags", "logs"): a case-insensitive match, or the
// [Closest] word at most one edit away, or two for names of eight bytes
// or more ("costumers" for "customers"). got itself is never suggested.
func Name(got string, known []string) (string, bool) {
	others := make([]string, 0, len(known))
	for _, k := range known {
		if k != got {
			others = append(others, k)
		}
	}
	w, ok := Closest(got, others)
	if !ok {
		return "", false
	}
	limit := 1
	if len(got) >= 8 {
		limit = 2
	}
	if Distance(got, w) > limit && !strings.EqualFold(got, w) {
		return "", false
	}
	return w, true
}
