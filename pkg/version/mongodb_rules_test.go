package version_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// mongoRule is one step on one document with the result MongoDB gives:
// the document (relaxed Extended JSON), or "error: " and what the error
// must name (always the path; the document's _id is checked for every
// error). Each rule cites the MongoDB source that decides it; all paths
// are under src/mongo/db/update/ in github.com/mongodb/mongo.
type mongoRule struct {
	step, doc, want, cite string
}

var mongoRules = []mongoRule{
	// Issue 15 item 5: $-prefixed names below the top level.
	{`{set: {sneaky.$x: 1}}`, `{"_id": 1}`, `{"_id":1,"sneaky":{"$x":1}}`,
		"jstests/core/updateh.js (SERVER-49117): {$set: {'sneaky.$x': 1}} works"},
	{`{rename: {a.$old: a.new}}`, `{"_id": 1, "a": {"$old": 1}}`, `{"_id":1,"a":{"new":1}}`,
		"rename_node_test.cpp CanRenameFromInvalidFieldName"},
	// Item 6: an empty operand changes nothing.
	{`{set: {}}`, `{"_id": 1, "a": 1}`, `{"_id":1,"a":1}`, "update_driver.cpp parseUpdateExpression: no node for {}"},
	{`{unset: []}`, `{"_id": 1, "a": 1}`, `{"_id":1,"a":1}`, "update_driver.cpp parseUpdateExpression"},
	// Item 7: padding is capped at kMaxPaddingAllowed nulls.
	{`{set: {a.1500001: 1}}`, `{"_id": 1, "a": []}`, `error: a.1500001`,
		"path_support.h kMaxPaddingAllowed; path_support.cpp maybePadTo (CannotBackfillArray)"},
	{`{set: {b.1500002: 1}}`, `{"_id": 1, "b": [{"c": 1}]}`, `error: b.1500002`,
		"path_support_test.cpp ExcessivePaddingRequested: two beyond the cap with one element"},
	{`{set: {a.0.b.99999999999: 1}}`, `{"_id": 1, "a": [{"b": []}]}`, `error: a.0.b.99999999999`,
		"path_support.cpp isNumeric takes any digits; maybePadTo refuses"},
	// Item 8: _id may be set to the value it holds, and only to it.
	{`{set: {_id: 1}}`, `{"_id": 1, "a": 1}`, `{"_id":1,"a":1}`,
		"set_node.cpp updateExistingElement: a binary-equal value is a no-op"},
	{`{set: {_id: 2}}`, `{"_id": 1}`, `error: _id`, "modifier_node.cpp checkImmutablePathsNotModified (ImmutableField)"},
	{`{set: {_id: 1.0}}`, `{"_id": 1}`, `error: _id`, "set_node.cpp: 1.0 is not binary-equal to 1, so _id changes"},
	{`{set: {_id.r: eu}}`, `{"_id": {"r": "eu"}}`, `{"_id":{"r":"eu"}}`, "set_node.cpp: no-op"},
	{`{set: {_id.r: us}}`, `{"_id": {"r": "eu"}}`, `error: _id.r`, "modifier_node.cpp checkImmutablePathsNotModified"},
	{`{set: {_id.s: us}}`, `{"_id": {"r": "eu"}}`, `error: _id.s`, "modifier_node.cpp applyToNonexistentElement: creating _id.s modifies _id"},
	{`{default: {_id: 2}}`, `{"_id": 1}`, `{"_id":1}`, "_id exists, so the guarded $set never runs"},
	{`{rename: {x: _id}}`, `{"_id": 1, "x": 1}`, `{"_id":1}`, "rename_node.cpp SetElementNode: equal value, then $unset of x"},
	{`{rename: {x: _id}}`, `{"_id": 1, "x": 2}`, `error: _id`, "rename_node_test.cpp ApplyCannotOverwriteImmutablePath"},
	// $rename through arrays: the source (rename_node.cpp RenameNode::apply
	// on path_support.cpp findLongestPrefix).
	{`{rename: {a.0: b}}`, `{"_id": "test_object", "a": [1, 2]}`, `error: a.0`, "rename_node_test.cpp MoveOutOfArray"},
	{`{rename: {a.a: b}}`, `{"_id": 1, "a": [{"a": 1}, {"b": 2}]}`, `error: a.a`, "rename_node_test.cpp MoveNonexistentEmbeddedFieldOut (PathNotViable)"},
	{`{rename: {a.0.a: b}}`, `{"_id": 1, "a": [{"a": 1}, {"b": 2}]}`, `error: a.0.a`, "rename_node_test.cpp MoveEmbeddedFieldOutWithElementNumber"},
	{`{rename: {a.5: b}}`, `{"_id": 1, "a": [1, 2]}`, `{"_id":1,"a":[1,2]}`,
		"rename_node.cpp: findLongestPrefix stops at the missing index, 'the element we want to rename does not exist': no-op"},
	{`{rename: {a.1.c: b}}`, `{"_id": 1, "a": [{"c": 1}, {"d": 2}]}`, `{"_id":1,"a":[{"c":1},{"d":2}]}`,
		"rename_node.cpp: a.1 exists, a.1.c does not: no-op"},
	{`{rename: {a.1.c: b}}`, `{"_id": 1, "a": [{"c": 1}, 5]}`, `error: a.1.c`, "path_support.cpp findLongestPrefix: PathNotViable through 5"},
	{`{rename: {a.b: x}}`, `{"_id": 1, "a": 1}`, `error: a.b`, "rename_node.cpp: a non-viable source is an error, 'for consistency'"},
	{`{rename: {a.b: x}}`, `{"_id": 1, "a": null}`, `error: a.b`, "path_support.cpp findLongestPrefix: null is a leaf"},
	{`{rename: {a.b: x}}`, `{"_id": 1, "a": {"c": 1}}`, `{"_id":1,"a":{"c":1}}`, "rename_node_test.cpp RenameFromNonExistentPathIsNoOp"},
	// $rename: the destination, checked only once the source exists.
	{`{rename: {b: a.2}}`, `{"_id": "test_object", "a": [1, 2], "b": 2}`, `error: a.2`, "rename_node_test.cpp MoveIntoArray"},
	{`{rename: {b: a.1}}`, `{"_id": "test_object", "a": [1, 2], "b": 2}`, `error: a.1`, "rename_node_test.cpp MoveToArrayElement"},
	{`{rename: {b: a.c}}`, `{"_id": 1, "a": [1, 2], "b": 2}`, `error: a.c`, "rename_node.cpp: the destination's deepest existing element is an array"},
	{`{rename: {x: a.b}}`, `{"_id": 1, "a": [{"c": 1}, 5]}`, `{"_id":1,"a":[{"c":1},5]}`, "rename_node.cpp: the source x is missing: no-op before any destination check"},
	{`{rename: {b: a.0}}`, `{"_id": 1, "a": [1, 2, 3]}`, `{"_id":1,"a":[1,2,3]}`, "rename_node.cpp: the source b is missing: no-op"},
	{`{rename: {a: b.c}}`, `{"_id": 1, "a": 1, "b": 5}`, `error: b.c`, "path_support.cpp createPathAt: cannot create field 'c' in element {b: 5}"},
	{`{rename: {a: b.c}}`, `{"_id": 1, "a": 1, "b": null}`, `error: b.c`, "path_support.cpp createPathAt: null is not a document"},
	// A deliberate difference: MongoDB's $rename replaces an existing
	// target (rename_node_test.cpp ReplaceArrayField, ReplaceWithArrayField
	// give {_id: 1, b: 2} and {_id: 1, b: []}); a step refuses to destroy
	// the target's value (OverwriteError, docs/file-format.md).
	{`{rename: {a: b}}`, `{"_id": 1, "a": 2, "b": []}`, `error: b`, "rename_node_test.cpp ReplaceArrayField, refused: a step never overwrites"},
	{`{rename: {a: b}}`, `{"_id": 1, "a": [], "b": 2}`, `error: b`, "rename_node_test.cpp ReplaceWithArrayField, refused: a step never overwrites"},
	{`{rename: {a: b.c.d}}`, `{"_id": 1, "a": [{"a": 2, "b": 1}]}`, `{"_id":1,"b":{"c":{"d":[{"a":2,"b":1}]}}}`, "rename_node_test.cpp ToMissingDottedField"},
	// $unset: never creates, so a non-viable path is a no-op
	// (unset_node.h allowNonViablePath); an array element becomes null
	// (unset_node.cpp updateExistingElement).
	{`{unset: [a.1]}`, `{"_id": 1, "a": [1, 2, 3]}`, `{"_id":1,"a":[1,null,3]}`, "unset_node.cpp: an array element is set to null"},
	{`{unset: [a.b]}`, `{"_id": 1, "a": [{"b": 1}]}`, `{"_id":1,"a":[{"b":1}]}`, "unset_node.h allowNonViablePath: non-numeric part through an array"},
	{`{unset: [a.0.b]}`, `{"_id": 1, "a": [{"b": 1, "c": 2}]}`, `{"_id":1,"a":[{"c":2}]}`, "update_object_node.cpp getChild: numeric part indexes the array"},
	{`{unset: [a.b]}`, `{"_id": 1, "a": 5}`, `{"_id":1,"a":5}`, "unset_node.h allowNonViablePath"},
	{`{unset: [a.b]}`, `{"_id": 1, "a": null}`, `{"_id":1,"a":null}`, "unset_node.h allowNonViablePath"},
	{`{unset: [a.9]}`, `{"_id": 1, "a": [1]}`, `{"_id":1,"a":[1]}`, "unset_node.cpp: missing element, no-op"},
	// $set through arrays, null and scalars (path_support.cpp createPathAt).
	{`{set: {a.b: 1}}`, `{"_id": 1, "a": [1]}`, `error: a.b`, "path_support.cpp createPathAt: non-numeric part under an array"},
	{`{set: {a.b: 1}}`, `{"_id": 1, "a": null}`, `error: a.b`, "path_support.cpp createPathAt: cannot create field in {a: null}"},
	{`{set: {a.0.b: 1}}`, `{"_id": 1, "a": [5]}`, `error: a.0.b`, "path_support.h: 'a.0.b' is not viable when a.0 is a scalar"},
	{`{set: {a.2.b: 1}}`, `{"_id": 1, "a": [1]}`, `{"_id":1,"a":[1,null,{"b":1}]}`, "path_support.h: 'a.5.b' is viable in {a: []} (padding)"},
	{`{set: {a.0: 1}}`, `{"_id": 1, "a": {}}`, `{"_id":1,"a":{"0":1}}`, "path_support.h: in a document a numeric part is a field name"},
	{`{set: {a.01: 9}}`, `{"_id": 1, "a": [1, 2]}`, `{"_id":1,"a":[1,9]}`, "update_object_node.cpp getChild: parseUnsignedBase10Integer('01') is 1"},
}

// TestMongoDBRules pins each rule above (items 5-8 and the paths
// through arrays).
func TestMongoDBRules(t *testing.T) {
	for _, r := range mongoRules {
		name := r.step + " on " + r.doc
		doc := ext(t, r.doc)
		m, err := migration.Parse("0001_step.yaml", []byte("collections:\n  c:\n    upgrade:\n      - "+r.step+"\n"))
		if err != nil {
			t.Errorf("%s: the file is refused (%v); MongoDB accepts the update (%s)", name, err, r.cite)
			continue
		}
		got := runGo(t, m.Collections[0].Upgrade[0], doc)
		if want, isErr := strings.CutPrefix(r.want, "error: "); isErr {
			id, _ := bson.MarshalExtJSON(bson.D{{Key: "v", Value: doc[0].Value}}, false, false)
			idText := strings.TrimSuffix(strings.TrimPrefix(string(id), `{"v":`), "}")
			if got.err == nil || !strings.Contains(got.err.Error(), `"`+want+`"`) || !strings.Contains(got.err.Error(), "_id=") {
				t.Errorf("%s: got %s, want an error naming path %q and the _id %s (%s)", name, got, want, idText, r.cite)
			}
			continue
		}
		if got.err != nil || js(got.doc) != r.want {
			t.Errorf("%s:\n got %s\nwant %s (%s)", name, got, r.want, r.cite)
		}
	}
}

// TestPaddingCapBoundary: padding exactly kMaxPaddingAllowed nulls is
// accepted (path_support.cpp maybePadTo refuses only more).
func TestPaddingCapBoundary(t *testing.T) {
	got := runGo(t, parseStep(t, `{set: {b.1500001: 1}}`), ext(t, `{"_id": 1, "b": [{"c": 1}]}`))
	if got.err != nil {
		t.Fatal(got.err)
	}
	if b := got.doc[1].Value.(bson.A); len(b) != 1500002 || b[1500000] != nil || b[1500001] != int32(1) {
		t.Errorf("b has %d elements, want 1500002 ending in null, 1", len(b))
	}
}

// TestEmptyOperandHasNoServerUnit: an empty operand is a no-op update
// (update_driver.cpp), so the server-side plan sends nothing for it, and
// the plan of a chain made only of such steps is still server-side.
func TestEmptyOperandHasNoServerUnit(t *testing.T) {
	r, err := version.New(fstest.MapFS{"0001_a.yaml": {Data: []byte("collections:\n  c:\n    upgrade:\n      - set: {}\n      - unset: [x]\n      - rename: {}\n")}})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := r.ServerPlan("c", 0)
	if !ok || len(p.Units) != 1 || js(p.Units[0].Update) != `{"$unset":{"x":""}}` {
		t.Fatalf("ServerPlan = %+v, %v; want the one $unset", p, ok)
	}
	if ups, ok := version.ServerUpdates(parseStep(t, `{set: {}}`)); !ok || len(ups) != 0 {
		t.Errorf("ServerUpdates(set: {}) = %v, %v; want no update, ok", ups, ok)
	}
}
