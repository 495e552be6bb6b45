package doccheck

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository root, seen from this package's directory.
const root = "../.."

var quoteMarker = regexp.MustCompile(`^<!--\s*quote:\s*(\S+)\s*-->$`)

// block is a fenced code block of a Markdown file that must be checked: a
// Go block, or any block after a quote marker.
type block struct {
	line  int    // of the opening fence, 1-based
	lang  string // the fence's info string's first word
	quote string // the file named by the marker before it, "" if none
	body  []string
}

// blocks returns the blocks of a Markdown file to check, and problems with
// its quote markers (one not followed by a block).
func blocks(md string) (found []block, problems []string) {
	lines := strings.Split(md, "\n")
	quote, quoteLine := "", 0
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if t == "" {
			continue
		}
		if m := quoteMarker.FindStringSubmatch(t); m != nil {
			if quote != "" {
				problems = append(problems, fmt.Sprintf("%d: quote marker followed by no code block", quoteLine))
			}
			quote, quoteLine = m[1], i+1
			continue
		}
		if strings.HasPrefix(t, "```") {
			info := strings.Fields(strings.TrimPrefix(t, "```"))
			end := i + 1
			for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
				end++
			}
			lang := ""
			if len(info) > 0 {
				lang = info[0]
			}
			if isGo(lang) || quote != "" {
				found = append(found, block{line: i + 1, lang: lang, quote: quote, body: lines[i+1 : min(end, len(lines))]})
			}
			quote, i = "", end
			continue
		}
		if quote != "" {
			problems = append(problems, fmt.Sprintf("%d: quote marker followed by no code block", quoteLine))
			quote = ""
		}
	}
	if quote != "" {
		problems = append(problems, fmt.Sprintf("%d: quote marker followed by no code block", quoteLine))
	}
	return found, problems
}

func isGo(lang string) bool { return lang == "go" || lang == "golang" }

// dedent removes the indentation common to the non-blank lines and the
// trailing spaces of each.
func dedent(lines []string) []string {
	prefix, first := "", true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		switch {
		case first:
			prefix, first = ind, false
		default:
			for !strings.HasPrefix(ind, prefix) {
				prefix = prefix[:len(prefix)-1]
			}
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(strings.TrimPrefix(l, prefix), " \t\r")
	}
	return out
}

// quotes reports whether block is a run of consecutive lines of src, both
// compared after dedent.
func quotes(src string, block []string) bool {
	want := dedent(block)
	for len(want) > 0 && want[len(want)-1] == "" {
		want = want[:len(want)-1]
	}
	if len(want) == 0 {
		return false
	}
	lines := strings.Split(src, "\n")
	for i := 0; i+len(want) <= len(lines); i++ {
		got := dedent(lines[i : i+len(want)])
		match := true
		for j := range want {
			if got[j] != want[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// checkDoc returns the problems of one Markdown file: Go blocks without a
// quote marker, quotes of files outside the repository or not Go, blocks
// that are not in the file they name. read reads a repository file.
func checkDoc(md string, read func(name string) ([]byte, error)) (quoted []string, problems []string) {
	found, problems := blocks(md)
	for _, b := range found {
		switch {
		case b.quote == "":
			problems = append(problems, fmt.Sprintf("%d: Go block not quoted from a compiled file: put <!-- quote: path/to/file.go --> before it", b.line))
			continue
		case path.IsAbs(b.quote) || path.Clean(b.quote) != b.quote || strings.HasPrefix(b.quote, "../") || b.quote == "..":
			problems = append(problems, fmt.Sprintf("%d: quote %s: name a file inside the repository, relative to its root", b.line, b.quote))
			continue
		case isGo(b.lang) && !strings.HasSuffix(b.quote, ".go"):
			problems = append(problems, fmt.Sprintf("%d: quote %s: not a Go file", b.line, b.quote))
			continue
		}
		src, err := read(b.quote)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%d: quote %s: %v", b.line, b.quote, err))
			continue
		}
		if !quotes(string(src), b.body) {
			problems = append(problems, fmt.Sprintf("%d: block is not a verbatim run of lines of %s (changed since it was quoted?)", b.line, b.quote))
			continue
		}
		quoted = append(quoted, b.quote)
	}
	return quoted, problems
}

// docs lists README.md and docs/*.md, relative to the root.
func docs(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, n := range names {
		out = append(out, "docs/"+filepath.Base(n))
	}
	return out
}

func TestDocsQuoteCompiledFiles(t *testing.T) {
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(root, filepath.FromSlash(name))) }
	files := map[string][]string{} // quoted file -> docs quoting it
	for _, doc := range docs(t) {
		md, err := read(doc)
		if err != nil {
			t.Fatal(err)
		}
		quoted, problems := checkDoc(string(md), read)
		for _, p := range problems {
			t.Errorf("%s:%s", doc, p)
		}
		for _, q := range quoted {
			files[q] = append(files[q], doc)
		}
	}
	var goFiles []string
	for f := range files {
		if strings.HasSuffix(f, ".go") {
			goFiles = append(goFiles, f)
		}
	}
	for f, err := range compiledAndTested(goFiles...) {
		t.Errorf("%s, quoted by %s: %v", f, strings.Join(files[f], ", "), err)
	}
}

// compiledAndTested checks with the go command, for each file, that it is
// one of its package's Go files in this build (not excluded by a build
// constraint, not under testdata) and that the package has tests or is a
// command (package main, which the docs' script tests run). make test's go
// vet type-checks every such file. It returns a problem per file at fault.
func compiledAndTested(files ...string) map[string]error {
	problems := map[string]error{}
	if _, err := exec.LookPath("go"); err != nil {
		return problems // the quotes were still checked; the go command is not on PATH
	}
	var dirs []string
	for _, f := range files {
		dirs = append(dirs, "./"+path.Dir(f))
	}
	cmd := exec.Command("go", append([]string{"list", "-e", "-f",
		"{{.Dir}}|{{.Name}}|{{range .GoFiles}}{{.}} {{end}}|{{range .TestGoFiles}}{{.}} {{end}}{{range .XTestGoFiles}}{{.}} {{end}}"}, dirs...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		for _, f := range files {
			problems[f] = fmt.Errorf("go list: %v", err)
		}
		return problems
	}
	type pkg struct {
		name         string
		files, tests []string
	}
	pkgs := map[string]pkg{} // by directory, relative to the root
	abs, _ := filepath.Abs(root)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p := strings.SplitN(line, "|", 4)
		if len(p) != 4 {
			continue
		}
		rel, _ := filepath.Rel(abs, p[0])
		pkgs[filepath.ToSlash(rel)] = pkg{p[1], strings.Fields(p[2]), strings.Fields(p[3])}
	}
	for _, f := range files {
		p, ok := pkgs[path.Dir(f)]
		switch {
		case !ok:
			problems[f] = fmt.Errorf("no Go package in %s", path.Dir(f))
		case !contains(p.files, path.Base(f)) && !contains(p.tests, path.Base(f)):
			problems[f] = fmt.Errorf("not compiled in this build of %s (build constraints?)", path.Dir(f))
		case len(p.tests) == 0 && p.name != "main":
			problems[f] = fmt.Errorf("package %s has no tests: quote code that a test runs", path.Dir(f))
		}
	}
	return problems
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestCheckDoc(t *testing.T) {
	src := "package p\n\nfunc F() {\n\tif x {\n\t\treturn 1  \n\t}\n}\n"
	read := func(name string) ([]byte, error) {
		if name == "p/p.go" {
			return []byte(src), nil
		}
		return nil, os.ErrNotExist
	}
	for _, tc := range []struct {
		name, md string
		problems []string // a substring of each problem, in order
	}{
		{"whole function", "<!-- quote: p/p.go -->\n```go\nfunc F() {\n\tif x {\n\t\treturn 1\n\t}\n}\n```\n", nil},
		{"indented body", "<!-- quote: p/p.go -->\n\n```go\nif x {\n\treturn 1\n}\n```\n", nil},
		{"in a list", "1. Step\n\n   <!-- quote: p/p.go -->\n   ```go\n   \treturn 1\n   ```\n", nil},
		{"other languages pass", "```sh\ngo test ./...\n```\n", nil},
		{"unquoted", "Text.\n```go\nfunc F() {}\n```\n", []string{"not quoted"}},
		{"edited", "<!-- quote: p/p.go -->\n```go\nif x {\n\treturn 2\n}\n```\n", []string{"not a verbatim run"}},
		{"elided", "<!-- quote: p/p.go -->\n```go\nfunc F() {\n}\n```\n", []string{"not a verbatim run"}},
		{"text between", "<!-- quote: p/p.go -->\nSome text.\n```go\nfunc F() {\n```\n", []string{"no code block", "not quoted"}},
		{"missing file", "<!-- quote: p/q.go -->\n```go\nfunc F() {\n```\n", []string{"p/q.go"}},
		{"outside", "<!-- quote: ../x.go -->\n```go\nfunc F() {\n```\n", []string{"inside the repository"}},
		{"not Go", "<!-- quote: p/p.md -->\n```go\nfunc F() {\n```\n", []string{"not a Go file"}},
		{"empty block", "<!-- quote: p/p.go -->\n```go\n```\n", []string{"not a verbatim run"}},
		{"dangling marker", "<!-- quote: p/p.go -->\n", []string{"no code block"}},
		{"quoted yaml", "<!-- quote: p/p.go -->\n```yaml\nfunc F() {\n```\n", nil},
		{"edited yaml", "<!-- quote: p/p.go -->\n```yaml\na: 1\n```\n", []string{"not a verbatim run"}},
		{"yaml quoting no Go file", "<!-- quote: p/p.md -->\n```yaml\na: 1\n```\n", []string{"p/p.md"}},
	} {
		_, problems := checkDoc(tc.md, read)
		ok := len(problems) == len(tc.problems)
		for i := 0; ok && i < len(problems); i++ {
			ok = strings.Contains(problems[i], tc.problems[i])
		}
		if !ok {
			t.Errorf("%s: problems %q, want %q", tc.name, problems, tc.problems)
		}
	}
}

// TestCompiledAndTested: the go command's view of quoted files.
func TestCompiledAndTested(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	want := map[string]string{
		"internal/doccheck/quote_test.go":         "", // a test file of a tested package
		"examples/custom-mongomig/main.go":        "", // a command
		"examples/custom-mongomig/users/users.go": "no tests",
		"internal/doccheck/nosuch.go":             "not compiled",
		"internal/cli/testdata/broken/x.go":       "not compiled",
	}
	var files []string
	for f := range want {
		files = append(files, f)
	}
	got := compiledAndTested(files...)
	for f, w := range want {
		err := got[f]
		if w == "" && err != nil || w != "" && (err == nil || !strings.Contains(err.Error(), w)) {
			t.Errorf("%s: %v, want %q", f, err, w)
		}
	}
}
