package depcheck

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// floors places every package of pkg/ and internal/ on a floor: an
// import goes only to a lower floor (docs/architecture.md draws them). A
// package missing here fails TestImportsGoDown, so a new package gets a
// floor, and the architecture a line, when it is added.
var floors = map[string]int{
	"internal/suggest": 0, "migrations": 0,
	"pkg/buckets":   0, // time-bucketed families' names: standard library only, for application code
	"pkg/migration": 1, "pkg/validator": 1,
	"pkg/version":           2,
	"pkg/version/versioned": 3, "pkg/version/versiontest": 3, "internal/bsonx": 3, "pkg/events": 3,
	"pkg/lease": 3, "pkg/release": 3, "internal/gopanic": 3, "internal/testhook": 3, "internal/cmdlog": 3,
	"pkg/probe": 4, "internal/state": 4, "pkg/lint": 4, "pkg/lease/leasetest": 4, "internal/serverstate": 4, "internal/downgrade": 5,
	"internal/ledger": 4, "internal/window": 3, "internal/cmddoc": 5, "internal/statusview": 5, "internal/lifecycle": 5,
	"pkg/reshape": 5, // run-once operations: below the runner, which runs them in up
	// the runner's jobs and its reading planners: below the products, so
	// the runner keeps only deciding and sending
	"internal/expiry": 6, "internal/lifecycleplan": 6, "internal/enforce": 6, "internal/declared": 6, "internal/windowplan": 6,
	"internal/statusread": 6, "internal/runlock": 4,
	"pkg/runner": 7, "pkg/backfill": 7, "pkg/report": 7, "pkg/inspect": 7, "pkg/integrity": 7,
	"internal/sandbox": 6, "internal/sandbox/sandboxtest": 7, "internal/sampledata": 6,
	"internal/fixtures": 8, // test fixtures: imported by tests only (TestFixturesOnlyInTests)
	"internal/cli":      8,
	"pkg/command":       9,
	// tests only, and a benchmark report filter
	"internal/depcheck": 11, "internal/doccheck": 11, "internal/benchratio": 0,

	"pkg/command/sandbox": 10, // the opt-in sandbox of a team's binary (--embedded, demo, sandbox serve)

	"internal/idsplit": 3, // the split points of _id ranges: a parallel backfill's and a repair's
}

// products are the packages of floor 7 that never import each other: a
// backfill, a report, lint and inspection each stand alone, and the runner
// reaches them only through the CLI (lint is below the runner, which
// refuses files that do not lint).
var products = []string{"pkg/runner", "pkg/backfill", "pkg/report", "pkg/inspect", "pkg/lint", "pkg/integrity"}

// imports lists each package of pkg/ and internal/ with its direct
// imports of this module's packages (test files excluded).
func imports(t *testing.T) map[string][]string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/pkg/...", module+"/internal/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	all := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module+"/")
		all[pkg] = nil
		for _, d := range f[1:] {
			if strings.HasPrefix(d, module+"/") {
				all[pkg] = append(all[pkg], strings.TrimPrefix(d, module+"/"))
			}
		}
	}
	return all
}

// TestImportsGoDown: every import of a package of pkg/ or internal/ goes
// to a lower floor; the products never import each other; only the CLI
// (and test fixtures) import pkg/runner; nothing in pkg/ but pkg/command
// imports the CLI, and nothing in pkg/ the sandbox.
func TestImportsGoDown(t *testing.T) {
	for pkg, deps := range imports(t) {
		floor, ok := floors[pkg]
		if !ok {
			t.Errorf("%s has no floor: add it to floors here and to docs/architecture.md", pkg)
			continue
		}
		for _, d := range deps {
			df, ok := floors[d]
			switch {
			case !ok:
				t.Errorf("%s imports %s, which has no floor", pkg, d)
			case df >= floor:
				t.Errorf("%s (floor %d) imports %s (floor %d): imports only go down (docs/architecture.md)", pkg, floor, d, df)
			}
			if slices.Contains(products, pkg) && slices.Contains(products, d) && d != "pkg/lint" {
				t.Errorf("%s imports %s: the products never import each other", pkg, d)
			}
			if d == "pkg/runner" && pkg != "internal/cli" && pkg != "internal/fixtures" {
				t.Errorf("%s imports pkg/runner: only the CLI and pkg/command do", pkg)
			}
			// pkg/command is the CLI for a team's binary: the one library
			// above it, and still without the sandbox, which only the
			// opt-in pkg/command/sandbox brings.
			if strings.HasPrefix(pkg, "pkg/") && (d == "internal/cli" && pkg != "pkg/command" || strings.HasPrefix(d, "internal/sandbox") && pkg != "pkg/command/sandbox") {
				t.Errorf("%s imports %s: nothing in pkg/ does", pkg, d)
			}
		}
	}
}

// TestFixturesOnlyInTests: internal/fixtures (which imports the runner and
// the sandbox) is imported by test files only.
func TestFixturesOnlyInTests(t *testing.T) {
	for pkg, deps := range imports(t) {
		if slices.Contains(deps, "internal/fixtures") {
			t.Errorf("%s imports internal/fixtures outside its tests", pkg)
		}
	}
}
