package probe

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestClassifyPermissionRefusals: a probe refused for lack of privileges
// (Unauthorized 13; Atlas answers 8000, AtlasError) is "not permitted"
// with its code, not a capability the server lacks, and not a failure of
// the whole probe. (The error values are the driver's own types, as the
// server's replies decode into them; the sandbox has no users.)
func TestClassifyPermissionRefusals(t *testing.T) {
	for _, c := range []struct {
		code int32
		name string
	}{{13, "Unauthorized"}, {8000, "AtlasError"}} {
		err := mongo.CommandError{Code: c.code, Name: c.name, Message: "user is not allowed to do action [collMod] on [app.mongomig_probe]"}
		got, cerr := classify(err, "collMod with validator")
		if cerr != nil {
			t.Fatalf("%d: the probe failed: %v", c.code, cerr)
		}
		if got.Available || !got.NotPermitted || got.Code != int(c.code) ||
			!strings.HasPrefix(got.Reason, "collMod with validator not permitted (code ") {
			t.Errorf("%d: %+v", c.code, got)
		}
	}
	got, cerr := classify(mongo.CommandError{Code: 238, Name: "NotImplemented", Message: "collMod is not implemented"}, "collMod with validator")
	if cerr != nil || got.NotPermitted || got.Reason == "" {
		t.Errorf("NotImplemented: %+v, %v", got, cerr)
	}
}
