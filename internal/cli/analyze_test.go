package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// TestAnalyzeCommand: the text, Markdown and JSON reports of a collection
// with a growing array, a sparse field and a mixed type; bad flags exit 2.
func TestAnalyzeCommand(t *testing.T) {
	sb := filepath.Join(t.TempDir(), "sandbox")
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	sandboxtest.InDir(t, sb, "app", func(db *mongo.Database) {
		var docs []any
		for i := 0; i < 30; i++ {
			events := bson.A{}
			for j := 0; j < 30-i; j++ {
				events = append(events, int32(j))
			}
			var score any = int32(i)
			if i == 4 {
				score = "4"
			}
			d := bson.D{{Key: "_id", Value: bson.NewObjectIDFromTimestamp(start.Add(time.Duration(i) * time.Hour))},
				{Key: "events", Value: events}, {Key: "score", Value: score}}
			if i == 0 {
				d = append(d, bson.E{Key: "rare", Value: true})
			}
			docs = append(docs, d)
		}
		if _, err := db.Collection("feeds").InsertMany(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
	})
	r := run(t, false, "--embedded", sb, "analyze")
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"analysis of database app: 2 risks in 1 collection",
		"feeds  30 documents  size p50 ",
		"  versions  v0: 30",
		"  array     events: length p50 15, p99 30, max 30, correlation with age 1.00, rank correlation 1.00",
		"  sparse    rare: 3.3% (1/30)",
		"  mixed     score: int 29, string 1 (string: _id ",
		"  RISK growth: array events grows with document age (correlation 1.00, rank correlation 1.00; longest 30, median 15)",
		"  RISK mixed: field score has several types: int 29, string 1",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	md := filepath.Join(t.TempDir(), "analysis.md")
	if r := run(t, false, "--embedded", sb, "analyze", "--format", "markdown", "--out", md); r.code != ExitOK {
		t.Fatalf("markdown: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(md); !strings.Contains(string(b), "## feeds\n\n| measure | value |") || !strings.Contains(string(b), "- **growth**: array events grows") {
		t.Errorf("markdown:\n%s", b)
	}
	r = run(t, false, "--embedded", sb, "--json", "analyze", "--collection", "feeds")
	if r.code != ExitOK || !strings.Contains(r.stdout, `"kind": "growth"`) || !strings.Contains(r.stdout, `"ageCorrelation": 1`) && !strings.Contains(r.stdout, `"ageCorrelation": 0.999`) {
		t.Errorf("json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, bad := range [][]string{{"--format", "junit"}, {"--size-warn", "2"}, {"--collection", "nope"}} {
		if r := run(t, false, append([]string{"--embedded", sb, "analyze"}, bad...)...); r.code != ExitUsage {
			t.Errorf("analyze %v: exit %d, want 2\n%s", bad, r.code, r.stderr)
		}
	}
}
