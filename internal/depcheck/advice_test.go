package depcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// commandLine matches command-line advice in a string: a backquoted
// `mongomig ...`, mongomig followed by one of its commands (internal/cli's
// command names), a string ending "mongomig " that a command is added
// to, or a --flag.
var commandLine = regexp.MustCompile("`mongomig |\\bmongomig $|\\bmongomig (analyze|backfill|buckets|check|create|demo|down|info|init|lint|load|mark|repair|sandbox|serve|status|unlock|up|validate)\\b|(^|[^-\\w])--[a-z][a-z-]*")

// adviceAllowed are the string literals of pkg/ that may name a command
// line, by file and the text they contain, with the reason.
var adviceAllowed = []struct{ file, text, why string }{
	{"pkg/lease/lease.go", "`mongomig %s`", "Info.Holder names the command that holds a lease: data about the holder, not advice"},
	{"pkg/inspect/infer_file.go", "inferred by mongomig init", "the header of the baseline file init writes says where the file came from"},
	{"pkg/inspect/infer_file.go", "a bug in mongomig init", "names the command whose bug it is, not a command to run"},
}

// TestLibrariesGiveNoCommandLineAdvice: the string literals of pkg/ (its
// non-test files; comments are not literals) name no command line: no
// `mongomig ...`, no mongomig COMMAND, no --flag. A library error or event
// carries the data and its own words; internal/cli (advice.go and the
// commands' rendering) adds the commands and flags to run next, since the
// binary may be a team's own. pkg/command is left out: it is the command
// line of a team's binary.
func TestLibrariesGiveNoCommandLineAdvice(t *testing.T) {
	root := filepath.Join("..", "..")
	used := map[int]bool{}
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && (rel == "pkg/command" || strings.HasSuffix(rel, "test") || d.Name() == "testdata"):
			// pkg/command is a team binary's command line; packages
			// named ...test (leasetest) are test helpers.
			return filepath.SkipDir
		case d.IsDir(), !strings.HasSuffix(path, ".go"), strings.HasSuffix(path, "_test.go"):
			return nil
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !commandLine.MatchString(s) {
				return true
			}
			for i, a := range adviceAllowed {
				if a.file == rel && strings.Contains(s, a.text) {
					used[i] = true
					return true
				}
			}
			t.Errorf("%s: %q names a command line (%q): a library's message carries data; internal/cli adds the advice",
				fset.Position(lit.Pos()), s, commandLine.FindString(s))
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range adviceAllowed {
		if !used[i] {
			t.Errorf("adviceAllowed: %s no longer holds %q: remove the entry", a.file, a.text)
		}
	}
}
