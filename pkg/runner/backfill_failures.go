package runner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mongomig/mongomig/pkg/version"
)

// maxValueExcerpt is how many characters of a document's value a backfill
// failure quotes: values are the application's data, and a report is
// shared.
const maxValueExcerpt = 20

// backfillFailure words a document's failure for the backfill's result.
// key groups the documents failing the same way: it names neither their
// _id nor their values (as validate's groups, see upgradeMessage). msg is
// the group's message: the first document's, quoting at most an excerpt of
// its value; the group lists the _ids.
func backfillFailure(err error) (rule, key, msg string) {
	var ie *version.InvalidError
	if errors.As(err, &ie) {
		msg = "the upgraded document fails the validator: " + invalidSummary(ie)
		return "validator", msg, msg
	}
	key = upgradeMessageWith(err, func(string) string { return "…" })
	msg = upgradeMessageWith(err, func(found string) string { return "e.g. " + excerpt(found, maxValueExcerpt) })
	return "upgrade", key, msg
}

// excerpt cuts s to n characters, marking the cut.
func excerpt(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// invalidSummary names the rules an upgraded document breaks, without the
// values found (so documents failing the same way group together).
func invalidSummary(ie *version.InvalidError) string {
	var parts []string
	for _, f := range ie.Failures {
		p := f.Path
		if p == "" {
			p = "(document)"
		}
		parts = append(parts, fmt.Sprintf("%s: %s (%s)", p, f.Message, f.Rule))
	}
	return fmt.Sprintf("%s of migration %d; fix the documents or the upgrade, then run backfill again", strings.Join(parts, "; "), ie.From)
}
