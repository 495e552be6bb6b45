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
// 8000 is tested in pkg/runner; the sandbox has no users to refuse.)
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
