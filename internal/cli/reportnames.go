package cli

import (
	"fmt"
	"strings"

	"github.com/mongomig/mongomig/pkg/report"
)

// junitCaseName is a failure group's test case name, unique in its suite
// (seen holds the names given): path and rule, then the message where
// two groups share them (upgrade errors all have the rule "upgrade" and
// no path), then a number. CI systems merge or drop cases of one name.
func junitCaseName(seen map[string]bool, g report.FailureGroup) string {
	name := strings.TrimSpace(g.Path + " " + g.Rule)
	if seen[name] || g.Rule == "upgrade" && g.Path == "" {
		name = fmt.Sprintf("%s: %s", name, g.Message)
	}
	base := name
	for n := 2; seen[name]; n++ {
		name = fmt.Sprintf("%s (%d)", base, n)
	}
	seen[name] = true
	return name
}

// mdPath is a failure's path in a Markdown table: a code span, or
// "(document)" for the document itself (an empty code span shows as two
// backticks).
func mdPath(path string) string {
	if path == "" {
		return "(document)"
	}
	return mdCode(path)
}
