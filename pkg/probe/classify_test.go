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

// TestServerCodeDuplicateKeys: the duplicate-key answers of the servers
// mongomig meets are 11000, their messages matched as each words them
// (measured on FerretDB v1.24 and on FerretDB 2.5 with DocumentDB 0.106);
// any other code 1 is 0.
func TestServerCodeDuplicateKeys(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{mongo.CommandError{Code: 11000, Message: "E11000 duplicate key error collection: app.customers index: mail_1 dup key: { mail: \"a@x\" }"}, 11000},
		{mongo.CommandError{Code: 1, Name: "InternalError", Message: "UNIQUE constraint failed: index 'customers_c09344de_mail_1' (2067)"}, 11000},
		{mongo.CommandError{Code: 1, Name: "InternalError", Message: `could not create exclusion constraint "documents_rum_index_168"`}, 11000},
		{mongo.CommandError{Code: 1, Name: "InternalError", Message: "something else"}, 0},
		{mongo.WriteException{WriteErrors: mongo.WriteErrors{{Code: 11000, Message: "Duplicate key violation on the requested collection: Index 'handle_1'"}}}, 11000},
	} {
		if got := ServerCode(c.err); got != c.code {
			t.Errorf("%v: code %d, want %d", c.err, got, c.code)
		}
	}
	if m := DocumentDBUniqueIndex.FindStringSubmatch("Duplicate key violation on the requested collection: Index 'handle_1'"); m == nil || m[1] != "handle_1" {
		t.Errorf("DocumentDBUniqueIndex: %q", m)
	}
}
