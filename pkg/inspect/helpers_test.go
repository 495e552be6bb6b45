package inspect_test

import "github.com/mongomig/mongomig/internal/fixtures"

// The tests of a baseline check it the way a team uses it: it lints,
// validates the documents it came from, and `up` applies it. Those are
// pkg/runner's; the test helpers below are the runner tests' own, since
// test files cannot be shared between packages.

var (
	newRunner      = fixtures.NewRunner
	ledgerVersions = fixtures.LedgerVersions
	loadOrders     = fixtures.LoadOrders
)
