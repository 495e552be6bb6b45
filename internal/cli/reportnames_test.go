package cli

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/pkg/report"
)

// failingReport has two upgrade errors (no path, rule upgrade) and a
// failure of the document itself (no path).
func failingReport() *report.Report {
	return &report.Report{Database: "app", Failing: 4, WouldReject: true, Collections: []report.Collection{{
		Collection: "users", ValidatorFrom: 1, ValidationLevel: "strict", ValidationAction: "error", Scanned: 9, Failing: 4,
		UpgradeErrors: []report.FailureGroup{
			{Rule: "upgrade", Message: "name is a int32, not a string", Count: 1, ExampleIDs: []string{"1"}},
			{Rule: "upgrade", Message: "name is a bool, not a string", Count: 1, ExampleIDs: []string{"2"}},
		},
		Groups: []report.FailureGroup{
			{Rule: "required", Message: "missing email", Count: 2, ExampleIDs: []string{"3", "4"}},
			{Rule: "required", Message: "missing name", Count: 1, ExampleIDs: []string{"5"}},
		},
	}}}
}

// TestJUnitCaseNamesAreUnique: no two test cases of a suite share a name
// (issue 26: every upgrade error was a case named "upgrade").
func TestJUnitCaseNamesAreUnique(t *testing.T) {
	var b bytes.Buffer
	if err := renderJUnit(&b, failingReport()); err != nil {
		t.Fatal(err)
	}
	var out junitSuites
	if err := xml.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	for _, s := range out.Suites {
		seen := map[string]bool{}
		for _, c := range s.Cases {
			if seen[c.Name] {
				t.Errorf("suite %s has two cases named %q:\n%s", s.Name, c.Name, b.String())
			}
			seen[c.Name] = true
		}
	}
	for _, want := range []string{`name="upgrade: name is a int32, not a string"`, `name="required"`, `name="required: missing name"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no case %s:\n%s", want, b.String())
		}
	}
}

// TestMarkdownHasNoEmptyCodeSpan: a failure of the document itself (no
// path) shows as (document), not as an empty code span.
func TestMarkdownHasNoEmptyCodeSpan(t *testing.T) {
	var b bytes.Buffer
	if err := renderMarkdown(&b, failingReport()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "``") {
		t.Errorf("an empty code span:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "| (document) | upgrade | 1 | name is a int32, not a string | `1` |") {
		t.Errorf("no (document) row:\n%s", b.String())
	}
}
