package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/mongomig/mongomig"

// forbidden in any library package an application may link.
var heavy = []string{
	module + "/internal/sandbox",
	module + "/internal/cli",
	"github.com/FerretDB/",
	"github.com/urfave/cli",
	"github.com/fatih/color",
	"github.com/mattn/go-isatty",
}

func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-test=false", module+"/"+pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	return strings.Fields(string(out))
}

func TestLibrariesStayLight(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	for _, pkg := range []string{"pkg/migration", "pkg/validator", "pkg/version", "pkg/version/versioned", "pkg/lease", "pkg/lease/leasetest",
		"pkg/events", "pkg/probe", "pkg/lint", "pkg/runner", "pkg/backfill", "pkg/report", "pkg/inspect"} {
		for _, d := range deps(t, pkg) {
			for _, h := range heavy {
				if strings.HasPrefix(d, h) {
					t.Errorf("%s links %s", pkg, d)
				}
			}
		}
	}
}

// sandboxOnly are the packages only the embedded sandbox brings in.
var sandboxOnly = []string{
	module + "/internal/sandbox",
	"github.com/FerretDB/",
	"modernc.org/sqlite",
	"github.com/jackc/pgx",
	"github.com/go-sql-driver/mysql",
	"go.opentelemetry.io/",
	"google.golang.org/grpc",
	"github.com/prometheus/",
	"go.mongodb.org/mongo-driver/bson", // the v1 driver: FerretDB's, not ours
}

// TestCustomBinaryLinksNoSandbox: a team's binary built on pkg/command (as
// examples/custom-mongomig is) links neither the sandbox nor its storage
// engines; only the stock cmd/mongomig does.
func TestCustomBinaryLinksNoSandbox(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	for _, pkg := range []string{"pkg/command", "examples/custom-mongomig"} {
		for _, d := range deps(t, pkg) {
			for _, h := range sandboxOnly {
				if strings.HasPrefix(d, h) {
					t.Errorf("%s links %s", pkg, d)
				}
			}
		}
	}
	for _, pkg := range []string{"cmd/mongomig", "pkg/command/sandbox"} {
		found := false
		for _, d := range deps(t, pkg) {
			found = found || d == module+"/internal/sandbox"
		}
		if !found {
			t.Errorf("%s no longer links the sandbox: --embedded, demo and sandbox serve would not work in a binary that imports it", pkg)
		}
	}
}

// TestFloors: pkg/migration and pkg/validator import neither each other
// nor any mongomig package but the standard-library-only internal/suggest
// and pkg/buckets;
// pkg/lease imports no mongomig package.
func TestFloors(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	allowed := map[string]bool{module + "/internal/suggest": true, module + "/pkg/buckets": true}
	for _, pkg := range []string{"pkg/migration", "pkg/validator"} {
		for _, d := range deps(t, pkg) {
			if strings.HasPrefix(d, module+"/") && d != module+"/"+pkg && !allowed[d] {
				t.Errorf("%s imports %s, breaking the package floors of docs/architecture.md", pkg, d)
			}
		}
	}
	// pkg/lease sits between pkg/runner and the driver: it imports the
	// driver and the standard library only.
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, module+"/pkg/lease").CombinedOutput()
	if err != nil {
		t.Fatalf("go list pkg/lease: %v\n%s", err, out)
	}
	for _, d := range strings.Fields(string(out)) {
		if strings.Contains(strings.Split(d, "/")[0], ".") && !strings.HasPrefix(d, "go.mongodb.org/mongo-driver/v2/") {
			t.Errorf("pkg/lease imports %s: only the driver and the standard library belong below pkg/runner (docs/architecture.md)", d)
		}
	}
	// What application code imports (pkg/version and its collection
	// wrapper) pulls in only the floors below it: never pkg/runner,
	// pkg/lease, the CLI or the sandbox.
	below := map[string]bool{}
	for _, p := range []string{"pkg/version", "pkg/version/versioned", "pkg/validator", "pkg/migration", "internal/suggest", "pkg/buckets"} {
		below[module+"/"+p] = true
	}
	for _, pkg := range []string{"pkg/version", "pkg/version/versioned"} {
		for _, d := range deps(t, pkg) {
			if strings.HasPrefix(d, module+"/") && !below[d] {
				t.Errorf("%s imports %s: application code would link it (docs/architecture.md)", pkg, d)
			}
		}
	}
	for _, d := range deps(t, "internal/suggest") {
		if strings.Contains(d, ".") && !strings.HasPrefix(d, module) {
			t.Errorf("internal/suggest must use only the standard library, imports %s", d)
		}
	}
	// pkg/buckets is for application code too: the standard library only.
	for _, d := range deps(t, "pkg/buckets") {
		if strings.Contains(strings.Split(d, "/")[0], ".") && d != module+"/pkg/buckets" {
			t.Errorf("pkg/buckets must use only the standard library, imports %s", d)
		}
	}
}
