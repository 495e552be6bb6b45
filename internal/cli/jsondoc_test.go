package cli

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestJSONFieldsAreDocumented: every key `info --json` and
// `status --json --counts` print appears in that command's section of
// docs/cli.md, so the documented field lists cannot fall behind the binary.
func TestJSONFieldsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := sampleSandbox(t)
	if r := run(t, false, sandboxArgs(dir, "up", "--to", "2")...); r.code != ExitOK {
		t.Fatalf("up: exit %d\n%s", r.code, r.stderr)
	}
	for _, c := range []struct {
		section string
		args    []string
	}{
		{"### `info`", []string{"--json", "info"}},
		{"### `status", []string{"--json", "status", "--counts"}},
	} {
		r := run(t, false, sandboxArgs(dir, c.args...)...)
		if r.code != ExitOK {
			t.Fatalf("%v: exit %d\n%s", c.args, r.code, r.stderr)
		}
		var v any
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		text := section(t, string(doc), c.section)
		keys := map[string]bool{}
		jsonKeys(v, keys)
		var missing []string
		for k := range keys {
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(k) + `\b`).MatchString(text) {
				missing = append(missing, k)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("mongomig %s prints keys docs/cli.md's %s section does not name: %v", strings.Join(c.args, " "), c.section, missing)
		}
	}
}

// section is the text of the docs section whose heading starts with head,
// up to the next heading of that level.
func section(t *testing.T, doc, head string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+head)
	if i < 0 {
		t.Fatalf("docs/cli.md has no section %q", head)
	}
	rest := doc[i+1:]
	if j := strings.Index(rest[len(head):], "\n### "); j >= 0 {
		return rest[:len(head)+j]
	}
	return rest
}

func jsonKeys(v any, into map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			into[k] = true
			jsonKeys(x, into)
		}
	case []any:
		for _, x := range v {
			jsonKeys(x, into)
		}
	}
}
