package report_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/report"
)

// TestReportCountsEachDocumentAtItsVersion: a document too new for the
// files, or one its upgrade cannot transform, counts at its stored version
// (as status counts it), not as v0; documents failing the same way share
// one group; every failing _id is kept when asked.
func TestReportCountsEachDocumentAtItsVersion(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	docs := []any{
		bson.D{{Key: "_id", Value: "new1"}, {Key: "version", Value: 9}, {Key: "name", Value: "x"}},
		bson.D{{Key: "_id", Value: "new2"}, {Key: "version", Value: 9}, {Key: "name", Value: "y"}},
		bson.D{{Key: "_id", Value: "bad1"}, {Key: "version", Value: 1}, {Key: "name", Value: "z"}, {Key: "email", Value: "e@x"}, {Key: "contact", Value: "a string"}},
		bson.D{{Key: "_id", Value: "frac"}, {Key: "version", Value: 1.5}, {Key: "name", Value: "f"}},
	}
	for i := 0; i < 7; i++ { // no email: fail "contact required" after the upgrade
		docs = append(docs, bson.D{{Key: "_id", Value: fmt.Sprintf("noemail%d", i)}, {Key: "name", Value: "n"}})
	}
	if _, err := db.Collection("users").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, db, samples(t))
	rp := newReporter(t, db, samples(t))
	rep, err := rp.Validate(ctx, report.Options{Collections: []string{"users"}})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Collections[0]
	st, err := r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var status []report.VersionCount
	for _, cs := range st.Collections {
		if cs.Name == "users" {
			status = cs.Documents
		}
	}
	want := []report.VersionCount{{Version: 0, Count: 7}, {Version: 1, Count: 1}, {Version: 9, Count: 2}, {Invalid: "1.5", Count: 1}}
	if !reflect.DeepEqual(c.Versions, want) && !reflect.DeepEqual(c.Versions, []report.VersionCount{want[3], want[0], want[1], want[2]}) {
		t.Errorf("report versions = %+v, want %+v", c.Versions, want)
	}
	if len(status) != len(c.Versions) {
		t.Errorf("status counts %+v, the report %+v", status, c.Versions)
	}
	for _, s := range status {
		found := false
		for _, v := range c.Versions {
			found = found || v == s
		}
		if !found {
			t.Errorf("status counts %+v, the report does not: %+v", s, c.Versions)
		}
	}
	var tooNew *report.FailureGroup
	for i, g := range c.UpgradeErrors {
		if strings.Contains(g.Message, "version 9") {
			tooNew = &c.UpgradeErrors[i]
		}
	}
	if len(c.UpgradeErrors) != 3 || tooNew == nil || tooNew.Count != 2 || strings.Contains(tooNew.Message, "new1") {
		t.Errorf("upgrade errors = %+v, want one group for the two too-new documents", c.UpgradeErrors)
	}
	if len(c.Groups) != 1 || c.Groups[0].Count != 7 || len(c.Groups[0].ExampleIDs) != report.MaxExampleIDs {
		t.Fatalf("groups = %+v", c.Groups)
	}
	all, err := rp.Validate(ctx, report.Options{Collections: []string{"users"}, AllExampleIDs: true})
	if err != nil {
		t.Fatal(err)
	}
	if g := all.Collections[0].Groups[0]; g.Count != 7 || len(g.ExampleIDs) != 7 || g.ExampleIDs[6] != `"noemail6"` {
		t.Errorf("all ids: %+v", g)
	}
}

// TestReportJSONValues: ids are JSON values, not strings holding JSON (a
// plan's commands too: pkg/runner's TestPlanJSONValues); a cross-check
// that could not run has no verdict, and a collection that does not exist
// gets none either.
func TestReportJSONValues(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	if _, err := db.Collection("users").InsertOne(ctx, bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	rep, err := newReporter(t, db, samples(t)).Validate(ctx, report.Options{Collections: []string{"users", "orders"}})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Collections []struct {
			Collection  string
			Failures    []struct{ ExampleIDs []any }
			ServerCheck map[string]any
		}
	}
	b, _ := json.Marshal(rep)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, c := range got.Collections {
		if agrees, present := c.ServerCheck["agrees"]; !present || agrees != nil || c.ServerCheck["available"] != false {
			t.Errorf("%s: serverCheck = %v, want available false and agrees null", c.Collection, c.ServerCheck)
		}
	}
	if reason := got.Collections[1].ServerCheck["reason"]; reason != "the collection does not exist: nothing to compare" {
		t.Errorf("orders (missing): reason %v", reason)
	}
	if ids := got.Collections[0].Failures[0].ExampleIDs; len(ids) != 1 || reflect.TypeOf(ids[0]).Kind() != reflect.Map {
		t.Errorf("users exampleIds = %#v, want one {$oid: ...} object\n%s", ids, b)
	}
	var back report.Report
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Collections[0].Groups, rep.Collections[0].Groups) {
		t.Errorf("round trip: %v\n%+v\n%+v", err, back.Collections[0].Groups, rep.Collections[0].Groups)
	}
}
