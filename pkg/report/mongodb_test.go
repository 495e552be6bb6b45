package report_test

import (
	"context"
	"testing"

	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/report"
)

// TestReportCrossCheckOnMongoDB: on MongoDB the report's count of stored
// documents failing the schema must agree with the server's $jsonSchema
// count.
func TestReportCrossCheckOnMongoDB(t *testing.T) {
	db := sandboxtest.MongoDB(t, "mongomig_test_report", "the server cross-check needs $jsonSchema queries (the sandbox reports it unavailable, tested in TestReportOnSampleData)")
	ctx := context.Background()
	if _, err := sampledata.Load(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	rep, err := newReporter(t, db, samples(t)).Validate(ctx, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Collections {
		if c.ServerCheck == nil || !c.ServerCheck.Available || c.ServerCheck.Agrees == nil || !*c.ServerCheck.Agrees {
			t.Errorf("%s: server check %+v", c.Collection, c.ServerCheck)
		}
	}
}
