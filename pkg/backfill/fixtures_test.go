package backfill_test

import "github.com/mongomig/mongomig/internal/fixtures"

// The fixtures these tests share with pkg/runner's.
var (
	counterFS         = fixtures.CounterFS
	incN              = fixtures.IncN
	counterRunner     = fixtures.CounterRunner
	insertItems       = fixtures.InsertItems
	checkItems        = fixtures.CheckItems
	sampleApplied     = fixtures.SampleApplied
	sampleAppliedWith = fixtures.SampleAppliedWith
)
