package runner_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
)

// TestDryRunPredictsUniqueIndexBuilds: 0001's unique index on email, were
// it not sparse, meets users 7 and 23 without email: MongoDB indexes both
// as null and the build fails with E11000 (the sandbox accepts it). The
// dry run predicts it, names a colliding _id and would reject; with
// sparse: true (as the samples now declare) it passes (issue 11, hole 8).
func TestDryRunPredictsUniqueIndexBuilds(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "app")
	if _, err := sampledata.Load(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	notSparse := fstest.MapFS{}
	for k, v := range samples(t) {
		notSparse[k] = v
	}
	const f = "0001_create_users.yaml"
	notSparse[f] = &fstest.MapFile{Data: []byte(strings.Replace(string(notSparse[f].Data), "unique: true, sparse: true", "unique: true", 1))}
	for _, tc := range []struct {
		name  string
		fsys  fstest.MapFS
		fails bool
	}{{"not sparse", notSparse, true}, {"sparse", samples(t), false}} {
		rep, err := newRunner(t, db, tc.fsys).DryRunReport(ctx, 1, runner.ReportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.IndexBuilds) != 1 {
			t.Fatalf("%s: index builds %+v", tc.name, rep.IndexBuilds)
		}
		b := rep.IndexBuilds[0]
		if b.Fails() != tc.fails {
			t.Errorf("%s: %+v, want fails=%v", tc.name, b, tc.fails)
		}
		if tc.fails && (b.Duplicates != 1 || b.MissingAsNull != 1 || len(b.ExampleIDs) != 1 || !strings.Contains(string(b.ExampleIDs[0]), "650100000000000000000017") || !rep.WouldReject) {
			t.Errorf("%s: %+v, wouldReject %v; want user 23 colliding with user 7 on null", tc.name, b, rep.WouldReject)
		}
	}
}
