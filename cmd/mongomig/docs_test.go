package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// TestDocsCommandsAreScripted: every mongomig command in a shell block of
// README.md or docs/*.md (`mongomig ...` or `go run ./cmd/mongomig ...`)
// is run, as written, by a script in testdata/script. Quotes and trailing
// comments are ignored; a script line may be prefixed by `!` or `code N`.
func TestDocsCommandsAreScripted(t *testing.T) {
	scripted := map[string]bool{}
	scripts, _ := filepath.Glob("testdata/script/*.txtar")
	for _, f := range scripts {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(a.Comment), "\n") {
			if cmd := normalizeScriptLine(line); cmd != "" {
				scripted[cmd] = true
			}
		}
	}
	docs, _ := filepath.Glob("../../docs/*.md")
	docs = append(docs, "../../README.md")
	found := 0
	for _, doc := range docs {
		for _, cmd := range docCommands(t, doc) {
			found++
			if !scripted[cmd] {
				t.Errorf("%s: `%s` is run by no script in cmd/mongomig/testdata/script", filepath.Base(doc), cmd)
			}
		}
	}
	if found < 10 {
		t.Fatalf("found only %d commands in the docs: is the parser broken?", found)
	}
}

var (
	fenceRE   = regexp.MustCompile("(?s)```(?:sh|bash|shell)\n(.*?)```")
	commandRE = regexp.MustCompile(`^(?:go run \./cmd/mongomig|mongomig)(\s.*)?$`)
	codeRE    = regexp.MustCompile(`^(?:! |code \d+ )`)
	bgRE      = regexp.MustCompile(`^bg \S+ `)
)

// docCommands returns the normalised mongomig command lines of a document's
// shell blocks.
func docCommands(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range fenceRE.FindAllStringSubmatch(string(b), -1) {
		for _, line := range strings.Split(m[1], "\n") {
			line = strings.TrimSpace(stripComment(line))
			if !commandRE.MatchString(line) {
				continue
			}
			out = append(out, normalize(strings.Replace(line, "go run ./cmd/mongomig", "mongomig", 1)))
		}
	}
	return out
}

func normalizeScriptLine(line string) string {
	line = codeRE.ReplaceAllString(strings.TrimSpace(line), "")
	line = bgRE.ReplaceAllString(line, "") // bg VAR mongomig sandbox serve
	if !strings.HasPrefix(line, "mongomig") {
		return ""
	}
	return normalize(line)
}

func stripComment(line string) string {
	if i := strings.Index(line, " #"); i >= 0 {
		return line[:i]
	}
	return line
}

func normalize(cmd string) string {
	cmd = strings.NewReplacer(`"`, "", `'`, "").Replace(cmd)
	return strings.Join(strings.Fields(cmd), " ")
}
