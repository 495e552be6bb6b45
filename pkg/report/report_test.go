package report_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/report"
	"github.com/mongomig/mongomig/pkg/runner"
)

func oid(coll string, i int) string { return `{"$oid":"` + sampledata.ID(coll, i).Hex() + `"}` }

// TestReportOnSampleData asserts the known failures of the sample data
// exactly: counts, paths, rules and example ids.
func TestReportOnSampleData(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	if _, err := sampledata.Load(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	var progress []int64
	rep, err := dryRun(t, db, samples(t), runner.Latest, report.Options{ChunkSize: 7, Progress: func(c string, n, total int64) {
		if c == "users" {
			progress = append(progress, n)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(rep, "", " ")
	if len(rep.Collections) != 4 || rep.Failing != 4 || !rep.WouldReject {
		t.Fatalf("report = %s", got)
	}
	byName := map[string]report.Collection{}
	for _, c := range rep.Collections {
		byName[c.Collection] = c
	}
	users := byName["users"]
	if users.Scanned != 40 || users.Failing != 2 || users.ValidatorFrom != 3 || users.ValidationLevel != "moderate" || users.ValidationAction != "error" {
		t.Errorf("users = %+v", users)
	}
	if len(users.Groups) != 1 || users.Groups[0].Path != "contact" || users.Groups[0].Rule != "required" || users.Groups[0].Count != 2 ||
		strings.Join(users.Groups[0].ExampleIDs, ",") != oid("users", 7)+","+oid("users", 23) {
		t.Errorf("users failures = %+v", users.Groups)
	}
	if len(users.Versions) != 1 || users.Versions[0].Version != 0 || users.Versions[0].Count != 40 {
		t.Errorf("users versions = %+v", users.Versions)
	}
	orders := byName["orders"]
	if orders.Failing != 1 || len(orders.Groups) != 1 || orders.Groups[0].Path != "items.0.qty" || orders.Groups[0].Rule != "minimum" ||
		orders.Groups[0].ExampleIDs[0] != oid("orders", 13) {
		t.Errorf("orders failures = %+v", orders.Groups)
	}
	comments := byName["comments"]
	if comments.Failing != 1 || comments.ValidationAction != "warn" || comments.Groups[0].Path != "body" || comments.Groups[0].Rule != "minLength" ||
		comments.Groups[0].ExampleIDs[0] != oid("comments", 5) {
		t.Errorf("comments = %+v", comments)
	}
	if byName["posts"].Failing != 0 || byName["posts"].Scanned != 12 {
		t.Errorf("posts = %+v", byName["posts"])
	}
	// The sandbox cannot count with $jsonSchema: the cross-check says so.
	if users.ServerCheck == nil || users.ServerCheck.Available || !strings.Contains(users.ServerCheck.Reason, "$jsonSchema") {
		t.Errorf("server check = %+v", users.ServerCheck)
	}
	if len(progress) != 6 || progress[len(progress)-1] != 40 {
		t.Errorf("progress = %v, want 6 chunks of 7 ending at 40", progress)
	}

	// Sampling reads the first N in _id order and skips the cross-check.
	rp := newReporter(t, db, samples(t))
	s, err := rp.Validate(ctx, report.Options{Collections: []string{"users"}, Sample: 10})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Collections[0]; c.Scanned != 10 || !c.Sampled || c.Failing != 1 || c.ServerCheck != nil {
		t.Errorf("sampled users = %+v", c)
	}

	// After up, the dry-run report has nothing left to check.
	if _, err := newRunner(t, db, samples(t)).Up(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := dryRun(t, db, samples(t), runner.Latest, report.Options{})
	if err != nil || len(after.Collections) != 0 || after.WouldReject {
		t.Errorf("dry-run report after up = %+v, %v", after, err)
	}
	// validate still reports the current validators.
	v, err := rp.Validate(ctx, report.Options{})
	if err != nil || v.Failing != 4 {
		t.Errorf("validate after up: %+v %v", v, err)
	}
}

// TestReportUpgradeErrors: a document its own upgrade cannot transform is
// reported as such, with its id.
func TestReportUpgradeErrors(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	if _, err := db.Collection("users").InsertOne(ctx, map[string]any{"_id": "bad", "name": "x", "email": "e@x", "contact": "not a document"}); err != nil {
		t.Fatal(err)
	}
	rep, err := newReporter(t, db, samples(t)).Validate(ctx, report.Options{Collections: []string{"users"}})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Collections[0]
	if c.Failing != 1 || len(c.UpgradeErrors) != 1 || c.UpgradeErrors[0].ExampleIDs[0] != `"bad"` ||
		!strings.Contains(c.UpgradeErrors[0].Message, `0003_user_contact.yaml step 1 (rename): path "contact.email": cannot create field "email" in element {contact: a string}`) {
		t.Errorf("report = %+v", c)
	}
}
