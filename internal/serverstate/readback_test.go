package serverstate

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The read-back rule follows MongoDB's catalog
// (src/mongo/db/catalog/collection_options.cpp): listCollections shows the
// validator as it was sent, and validationLevel and validationAction only
// when set. Stock FerretDB 2's create keeps none of them; no test server
// here does that (the second one passes create's options through), so the
// comparison is pinned here and the matching read-back on a real server by
// TestUpEnforcesOnMongoDB.

var readBackSchema = bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "required", Value: bson.A{"name"}}}}}

func heldAs(t *testing.T, v bson.D, level, action string) Collection {
	t.Helper()
	h := Collection{Exists: true, Level: level, Action: action}
	if v != nil {
		b, err := bson.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		h.Validator = b
	}
	return h
}

func TestReadBackDiff(t *testing.T) {
	// The fields of create and collMod commands (the collection's name
	// left out).
	create := bson.D{{Key: "validator", Value: readBackSchema}, {Key: "validationLevel", Value: "moderate"}, {Key: "validationAction", Value: "error"}}
	validatorOnly := bson.D{{Key: "validator", Value: readBackSchema}}
	other := bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "required", Value: bson.A{"email"}}}}}
	for _, tc := range []struct {
		name string
		sent bson.D
		h    Collection
		want []string // "" : held as sent
	}{
		{"held as sent", create, heldAs(t, readBackSchema, "moderate", "error"), nil},
		{"stock FerretDB 2's create: no options kept", create, heldAs(t, nil, "", ""),
			[]string{"listCollections shows no validator", `validationLevel "", not "moderate"`, `validationAction "", not "error"`}},
		{"another validator", create, heldAs(t, other, "moderate", "error"), []string{"listCollections shows another validator: ", `"email"`}},
		{"options not sent are not looked at", validatorOnly, heldAs(t, readBackSchema, "", ""), nil},
		{"removing a validator: none held", bson.D{{Key: "validator", Value: bson.D{}}}, heldAs(t, nil, "", ""), nil},
		{"no collection", create, Collection{}, []string{"listCollections shows no collection users"}},
	} {
		got := ReadBackDiff("users", tc.sent, tc.h)
		if len(tc.want) == 0 && got != "" {
			t.Errorf("%s: diff %q, want none", tc.name, got)
		}
		if len(tc.want) > 0 && got == "" {
			t.Errorf("%s: no diff, want %q", tc.name, tc.want)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: diff %q lacks %q", tc.name, got, w)
			}
		}
	}
}

func TestCheckEnforced(t *testing.T) {
	window := bson.D{{Key: "$or", Value: bson.A{readBackSchema}}}
	for _, tc := range []struct {
		name        string
		h           Collection
		enforcement string
		level       string
	}{
		{"the window", heldAs(t, window, "", ""), EnforcementServer, "strict"},
		{"the plain schema, level set", heldAs(t, readBackSchema, "moderate", "error"), EnforcementServer, "moderate"},
		{"dropped", heldAs(t, nil, "", ""), EnforcementAbsent, "strict"},
		{"no collection", Collection{}, EnforcementAbsent, "strict"},
		{"replaced", heldAs(t, bson.D{{Key: "x", Value: 1}}, "", ""), EnforcementDiffers, "strict"},
	} {
		e := CheckEnforced("users", tc.h, "strict", "error", window, readBackSchema)
		if e.Enforcement != tc.enforcement || e.Level != tc.level {
			t.Errorf("%s: %q (%s), want %q (%s); note %q", tc.name, e.Enforcement, e.Level, tc.enforcement, tc.level, e.Note)
		}
		if tc.enforcement != EnforcementServer && e.Note == "" {
			t.Errorf("%s: no note", tc.name)
		}
	}
}
