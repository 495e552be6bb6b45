package report_test

import (
	"context"
	"testing"

	"github.com/mongomig/mongomig/internal/fixtures"
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
	fsys, refused := fixtures.EnforceableSamples(t, db)
	rep, err := newReporter(t, db, fsys).Validate(ctx, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Collections {
		if r := refused[c.Collection]; len(r) > 0 {
			t.Run(c.Collection, func(t *testing.T) { t.Skipf("its schema uses %v, which the server does not enforce (probed)", r) })
			continue
		}
		if c.ServerCheck == nil || !c.ServerCheck.Available || c.ServerCheck.Agrees == nil || !*c.ServerCheck.Agrees {
			t.Errorf("%s: server check %+v", c.Collection, c.ServerCheck)
		}
	}
}
