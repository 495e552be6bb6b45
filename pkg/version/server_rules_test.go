package version_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// serverUpdateRule is a rule of MongoDB's update language that a
// MongoDB-compatible server may break (FerretDB 2 on DocumentDB breaks each
// of these: it refuses the no-ops and applies the refusal as a no-op). Its
// probe is one update the rule decides. On a server that gets the probe
// wrong, TestDifferentialMongoDB skips the differential pairs the rule
// decides where the server differs from Go, naming the rule, after checking
// Go's result against MongoDB's; on MongoDB no pair is skipped. Every cite
// is under src/mongo/db/update/ in github.com/mongodb/mongo.
type serverUpdateRule struct {
	name      string
	cite      string
	step, doc string // the probe
	refuses   bool   // MongoDB refuses the update; else it changes nothing
	pairs     []string
}

var serverUpdateRules = []serverUpdateRule{
	{
		name: "a $unset through an array by a field name is a no-op",
		cite: "unset_node.h allowNonViablePath is true, so modifier_node.cpp applyToNonexistentElement returns a no-op for a non-viable path; unset_node_test.cpp UnsetNoOpThroughArray",
		step: `{unset: [a.b]}`, doc: `{"a": [{"b": 1}]}`,
		pairs: []string{
			`{unset: [a.b]} on {"a": [1, 2, 3]}`,
			`{unset: [a.b]} on {"a": [1, 2, 3], "b": 5}`,
			`{unset: [a.b]} on {"a": [{"b": 1}, {"b": 2}]}`,
			`{unset: [a.b]} on {"a": [{"c": 1}, 5]}`,
			`{unset: [nothing, a.b.c]} on {"a": [1, 2, 3]}`,
			`{unset: [nothing, a.b.c]} on {"a": [1, 2, 3], "b": 5}`,
			`{unset: [nothing, a.b.c]} on {"a": [{"b": 1}, {"b": 2}]}`,
			`{unset: [nothing, a.b.c]} on {"a": [{"c": 1}, 5]}`,
		},
	},
	{
		name: "a $unset through a scalar array element is a no-op",
		cite: "update_object_node.cpp applyChild finds no field b in the element 1 and appends it to pathToCreate; unset_node.h allowNonViablePath makes that a no-op (unset_node_test.cpp UnsetNoOpDottedPath)",
		step: `{unset: [a.0.b]}`, doc: `{"a": [1]}`,
		pairs: []string{
			`{unset: [a.0.b]} on {"a": [1, 2, 3]}`,
			`{unset: [a.0.b]} on {"a": [1, 2, 3], "b": 5}`,
		},
	},
	{
		name: "a $rename of a missing source is a no-op, wherever its destination",
		cite: "rename_node.cpp RenameNode::apply returns a no-op when the source is not found, before it checks the destination for arrays; rename_node_test.cpp RenameFromNonExistentPathIsNoOp",
		step: `{rename: {x: a.b}}`, doc: `{"a": [1]}`,
		pairs: []string{
			`{rename: {x: a.b}} on {"a": [1, 2, 3]}`,
			`{rename: {x: a.b}} on {"a": [1, 2, 3], "b": 5}`,
			`{rename: {x: a.b}} on {"a": [{"b": 1}, {"b": 2}]}`,
			`{rename: {x: a.b}} on {"a": [{"c": 1}, 5]}`,
			`{rename: {b: a.0}} on {"a": [1, 2, 3]}`,
			`{rename: {b: a.0}} on {"a": [{"b": 1}, {"b": 2}]}`,
			`{rename: {b: a.0}} on {"a": [{"c": 1}, 5]}`,
		},
	},
	{
		name: "a $rename of a source past an array's end, or missing in its element, is a no-op",
		cite: "path_support.cpp findLongestPrefix stops at the array (or the element) with an OK status, so rename_node.cpp RenameNode::apply finds no source and returns a no-op; the source-in-an-array refusal applies only to a source that exists",
		step: `{rename: {a.5: x}}`, doc: `{"a": [1]}`,
		pairs: []string{
			`{rename: {a.5: x}} on {"a": [1, 2, 3]}`,
			`{rename: {a.5: x}} on {"a": [1, 2, 3], "b": 5}`,
			`{rename: {a.5: x}} on {"a": [{"b": 1}, {"b": 2}]}`,
			`{rename: {a.5: x}} on {"a": [{"c": 1}, 5]}`,
			`{rename: {a.1.c: x}} on {"a": [{"b": 1}, {"b": 2}]}`,
		},
	},
	{
		name: "a $rename whose source runs through a scalar or null is refused, also when its destination runs through it too",
		cite: "path_support.cpp findLongestPrefix answers PathNotViable and rename_node.cpp RenameNode::apply raises it (\"most updates fail on an attempt to update a non-viable path\") before it looks at the destination; rename_node_test.cpp MoveNonexistentEmbeddedFieldOut",
		step: `{rename: {a.k: a.b}}`, doc: `{"a": 1}`, refuses: true,
		pairs: []string{
			`{rename: {a.k: a.b}} on {"a": 1}`,
			`{rename: {a.k: a.b}} on {"a": null}`,
			`{rename: {a.k: a.b}} on {"a": "str"}`,
			`{rename: {a.k: a.b}} on {"a": true, "b": {"c": [1, {"d": 2}]}}`,
		},
	},
}

// mongoOutcome says whether res is what MongoDB gives under rule r for
// the document doc.
func (r *serverUpdateRule) mongoOutcome(res outcome, doc bson.D) bool {
	if r.refuses {
		return res.err != nil
	}
	return sameOutcome(res, outcome{doc: doc})
}

func (r *serverUpdateRule) mongoText() string {
	if r.refuses {
		return "an error"
	}
	return "the document unchanged"
}

// lackedRule is a rule the server got wrong, with its answer to the probe.
type lackedRule struct {
	*serverUpdateRule
	got outcome
}

// probeServerRules runs each rule's probe on db and returns, by
// differential pair, the rules the server got wrong.
func probeServerRules(t *testing.T, db *mongo.Database) map[string]lackedRule {
	t.Helper()
	ctx := context.Background()
	coll := db.Collection("update_rules")
	lacked := map[string]lackedRule{}
	for i := range serverUpdateRules {
		r := &serverUpdateRules[i]
		doc := ext(t, r.doc)
		id := bson.NewObjectID()
		got := runServer(ctx, coll, id, doc, serverModels(t, parseStep(t, r.step), id))
		if r.mongoOutcome(got, doc) {
			continue
		}
		t.Logf("the server breaks MongoDB's rule %q: %s on %s gives %s, MongoDB %s (%s)", r.name, r.step, r.doc, got, r.mongoText(), r.cite)
		for _, p := range r.pairs {
			lacked[p] = lackedRule{r, got}
		}
	}
	return lacked
}

// skipLackedRule runs pair name as a subtest that checks Go's result
// against MongoDB's under the rule and skips, naming the rule the server
// breaks.
func skipLackedRule(t *testing.T, name string, rule lackedRule, doc bson.D, goRes, srvRes outcome) {
	t.Run(name, func(t *testing.T) {
		if !rule.mongoOutcome(goRes, doc) {
			t.Errorf("go gives %s, MongoDB %s (%s)", goRes, rule.mongoText(), rule.cite)
		}
		t.Skipf("the server breaks MongoDB's rule %q (probed: %s on %s gives %s), so it cannot judge this pair: it gives %s, go %s as MongoDB does (%s)",
			rule.name, rule.step, rule.doc, rule.got, srvRes, goRes, rule.cite)
	})
}

// TestServerUpdateRulesPinGo: Go follows each rule, on its probe and on
// every pair it decides, and each pair is one the differential runs.
func TestServerUpdateRulesPinGo(t *testing.T) {
	var pairs []string
	for _, s := range differentialSteps {
		for _, d := range differentialDocs {
			pairs = append(pairs, s+" on "+d)
		}
	}
	for i := range serverUpdateRules {
		r := &serverUpdateRules[i]
		cases := append([]string{r.step + " on " + r.doc}, r.pairs...)
		for j, name := range cases {
			if j > 0 && !slices.Contains(pairs, name) {
				t.Errorf("%s: %s is not a differential pair", r.name, name)
				continue
			}
			step, docSrc, _ := strings.Cut(name, " on ")
			doc := ext(t, docSrc)
			if got := runGoWithID(t, parseStep(t, step), bson.NewObjectID(), doc); !r.mongoOutcome(got, doc) {
				t.Errorf("%s: go gives %s, MongoDB %s (%s)", name, got, r.mongoText(), r.cite)
			}
		}
	}
}
