package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

var located = regexp.MustCompile(`^(\d{1,4}_[^:\s]+|[^:\s]+\.(yaml|yml|json)):\d+:\d+: error: `)

// TestMalformedCatalogue runs lint and up on every directory of
// testdata/malformed: lint's output matches its golden file, names
// file:line:column (or, for file names, the file) with a fix for every
// error and exits 2; up exits 2 and writes nothing to the database.
func TestMalformedCatalogue(t *testing.T) {
	entries, err := os.ReadDir("testdata/malformed")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	sort.Strings(dirs)
	if len(dirs) < 40 {
		t.Fatalf("the catalogue holds %d broken directories, want at least 40", len(dirs))
	}
	sandboxDir := t.TempDir()
	for _, name := range dirs {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", "malformed", name)
			r := run(t, false, "--dir", dir, "lint")
			if r.code != ExitUsage {
				t.Fatalf("lint exit %d, want 2\n%s", r.code, r.stdout)
			}
			golden(t, filepath.Join("malformed-golden", name+".golden"), r.stdout)
			errorsSeen := 0
			lines := strings.Split(r.stdout, "\n")
			for i, line := range lines {
				if !strings.Contains(line, ": error: ") {
					continue
				}
				errorsSeen++
				fileOnly := strings.HasPrefix(line, strings.SplitN(line, ":", 2)[0]+": error: ")
				if !located.MatchString(line) && !fileOnly {
					t.Errorf("error without file:line:column: %s", line)
				}
				hasFix := i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    hint: ") ||
					strings.Contains(line, "; ") || strings.Contains(line, "did you mean") || strings.Contains(line, ":\n")
				if !hasFix && !strings.Contains(line, "differs from after") && !strings.Contains(line, "fails the validator") {
					t.Errorf("error without a fix: %s", line)
				}
			}
			if errorsSeen == 0 {
				t.Errorf("no error reported:\n%s", r.stdout)
			}
			r = run(t, false, "--embedded", sandboxDir, "--dir", dir, "up")
			if r.code != ExitUsage {
				t.Errorf("up exit %d, want 2\n%s", r.code, r.stderr)
			}
		})
	}
	// Nothing reached the database.
	sandboxtest.InDir(t, sandboxDir, "app", func(db *mongo.Database) {
		names, err := db.ListCollectionNames(context.Background(), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		if len(names) != 0 {
			t.Errorf("invalid migrations wrote to the database: collections %v", names)
		}
	})
}
