package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/pkg/probe"
)

// TestInfoSaysNotPermitted: a capability the server refused to probe for
// lack of privileges shows as "not permitted" with the code, never as a
// capability the server lacks. (Probe's classification of codes 13 and
// 8000 is tested in pkg/probe; the sandbox has no users to refuse.)
func TestInfoSaysNotPermitted(t *testing.T) {
	var out, errb bytes.Buffer
	r := &probe.ServerReport{Database: "app"}
	r.Server.Version = "8.0.4"
	r.Capabilities.Validators = probe.Capability{NotPermitted: true, Code: 8000, Reason: "collMod with validator not permitted (code 8000): user is not allowed to do action [collMod]"}
	r.Capabilities.Transactions = probe.Capability{NotPermitted: true, Code: 13, Reason: "transaction not permitted (code 13): not authorized"}
	r.Capabilities.PipelineUpdates = probe.Capability{Reason: "pipeline update refused: not implemented"}
	r.Capabilities.JSONSchemaQueries = probe.Capability{Available: true}
	renderInfo(&output{out: &out, err: &errb}, r)
	for _, want := range []string{
		"validators           not permitted (code 8000)  collMod with validator not permitted",
		"transactions         not permitted (code 13)",
		"pipeline updates     no  pipeline update refused",
		"$jsonSchema queries  yes",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errb.String(), "may not create validators here (code 8000)") || strings.Contains(errb.String(), "does not enforce validators") {
		t.Errorf("warning: %s", errb.String())
	}
}

// TestInfoShowsKeywords: the keywords a server does not enforce are listed
// with its answer for each and a warning; unknown support says why; full
// support is one line.
func TestInfoShowsKeywords(t *testing.T) {
	for _, c := range []struct {
		name     string
		kw       probe.KeywordSupport
		out, err []string
	}{
		{"unsupported", probe.KeywordSupport{Known: true, Unsupported: []string{"anyOf", "enum"}, UnsupportedTypes: []string{"number"}, Answers: []probe.KeywordAnswer{
			{Keyword: "anyOf", Answer: "insert refused: (FailedToParse) Unknown $jsonSchema keyword: anyOf"},
			{Keyword: "enum", Answer: "insert refused: (FailedToParse) Unknown $jsonSchema keyword: enum"},
			{Keyword: "bsonType: number", Answer: "insert refused: (BadValue) Unknown type name alias: number"},
		}}, []string{
			"$jsonSchema keywords not enforced: anyOf, enum; bsonType number\n",
			"    enum: insert refused: (FailedToParse) Unknown $jsonSchema keyword: enum\n",
			"    bsonType: number: insert refused: (BadValue) Unknown type name alias: number\n",
		}, []string{"this server does not enforce anyOf, enum; bsonType number as MongoDB does"}},
		{"all", probe.KeywordSupport{Known: true, Unsupported: []string{}, UnsupportedTypes: []string{}}, []string{"$jsonSchema keywords all enforced\n"}, nil},
		{"unknown", probe.KeywordSupport{Reason: "validators are unavailable (create with validator refused: NotImplemented)"}, []string{"$jsonSchema keywords unknown  validators are unavailable (create"}, nil},
	} {
		var out, errb bytes.Buffer
		r := &probe.ServerReport{Database: "app"}
		r.Capabilities.Validators = probe.Capability{Available: true}
		r.Capabilities.CreateKeepsOptions = probe.Capability{Available: true}
		r.Capabilities.Keywords = c.kw
		renderInfo(&output{out: &out, err: &errb}, r)
		for _, want := range c.out {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: output lacks %q:\n%s", c.name, want, out.String())
			}
		}
		for _, want := range c.err {
			if !strings.Contains(errb.String(), want) {
				t.Errorf("%s: warnings lack %q:\n%s", c.name, want, errb.String())
			}
		}
		if c.err == nil && errb.Len() > 0 {
			t.Errorf("%s: warnings %s", c.name, errb.String())
		}
	}
	// A create that drops its options is said when validators work.
	var out, errb bytes.Buffer
	r := &probe.ServerReport{Database: "app"}
	r.Capabilities.Validators = probe.Capability{Available: true}
	r.Capabilities.CreateKeepsOptions = probe.Capability{Reason: "create accepted the validator but listCollections shows none: the server dropped it"}
	r.Capabilities.Keywords = probe.KeywordSupport{Known: true}
	renderInfo(&output{out: &out, err: &errb}, r)
	if !strings.Contains(out.String(), "create keeps options no  create accepted the validator but listCollections shows none") ||
		!strings.Contains(errb.String(), "a validator sent with create does not exist (create accepted the validator") {
		t.Errorf("create dropping options:\n%s%s", out.String(), errb.String())
	}
}
