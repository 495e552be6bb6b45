package probe_test

import (
	"context"
	"testing"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/probe"
)

// TestValidationSettingsRefused: the sandbox has neither errorAndLog nor
// constraint, and the probe says why with the server's answer.
func TestValidationSettingsRefused(t *testing.T) {
	db := sandboxtest.Database(t, "probe81")
	vs, err := probe.ProbeValidationSettings(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if vs.ErrorAndLog.Available || vs.ErrorAndLog.Reason == "" || vs.Constraint.Available || vs.Constraint.Reason == "" {
		t.Errorf("sandbox: %+v", vs)
	}
}

// TestValidationSettingsMongoDB: on the second server each setting is
// either shown by listCollections or refused with a reason.
func TestValidationSettingsMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_probe81", "TestValidationSettingsRefused probes the sandbox")
	vs, err := probe.ProbeValidationSettings(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]probe.Capability{"errorAndLog": vs.ErrorAndLog, "constraint": vs.Constraint} {
		if !c.Available && c.Reason == "" {
			t.Errorf("%s: unavailable without a reason", name)
		}
		t.Logf("%s: %+v", name, c)
	}
}
