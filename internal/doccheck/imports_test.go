package doccheck

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/mongomig/mongomig"

// testServer is what no example may link: the embedded sandbox and what it
// is made of. (examples/custom-mongomig links internal/cli, through
// pkg/command: it is a command line, but without the sandbox.)
var testServer = []string{
	module + "/internal/sandbox",
	"github.com/FerretDB/",
	"modernc.org/sqlite",
	"modernc.org/libc",
	"github.com/jackc/pgx",
}

// linksSandboxToday are examples known to link the sandbox, with the reason
// (none since pkg/command stopped linking it). An exception expires by
// itself: once the example is light, the test fails until it is removed.
var linksSandboxToday = map[string]string{}

// goList runs the go command in the repository root and splits its output
// into lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.Fields(string(out))
}

func TestExamplesStayLight(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	// One line per package: its path, then every package it links.
	lines := goList(t, "-f", `{{.ImportPath}}|{{join .Deps "|"}}`, "./examples/...")
	if len(lines) < 2 {
		t.Fatalf("go list ./examples/... found %v", lines)
	}
	for _, line := range lines {
		deps := strings.Split(line, "|")
		rel := strings.TrimPrefix(deps[0], module+"/")
		var heavy []string
		for _, d := range deps[1:] {
			for _, h := range testServer {
				if strings.HasPrefix(d, h) {
					heavy = append(heavy, d)
				}
			}
		}
		why, known := linksSandboxToday[rel]
		switch {
		case known && len(heavy) == 0:
			t.Errorf("%s no longer links the sandbox: remove it from linksSandboxToday", rel)
		case known:
			t.Logf("%s still links %d sandbox packages: %s", rel, len(heavy), why)
		case len(heavy) > 0:
			t.Errorf("%s links the test server (%d packages), first %s", rel, len(heavy), heavy[0])
		}
	}
}

// TestLazyappImportsOnlyWhatItSays: the package the guide tells
// applications to copy imports pkg/version, the driver v2 and the standard
// library, nothing else.
func TestLazyappImportsOnlyWhatItSays(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	imports := goList(t, "-f", `{{join .Imports "\n"}}`, "./examples/lazyapp")
	for _, imp := range imports {
		std := !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".")
		if !std && imp != module+"/pkg/version" && !strings.HasPrefix(imp, "go.mongodb.org/mongo-driver/v2/") {
			t.Errorf("examples/lazyapp imports %s", imp)
		}
	}
	if !contains(imports, module+"/pkg/version") {
		t.Errorf("examples/lazyapp does not import pkg/version: %v", imports)
	}
}
