package migration

import (
	"strings"
	"testing"
)

// TestParseRunGo: a `go:` operation names the registered functions; the
// schema checksum covers their names (not their code, which the file
// does not hold).
func TestParseRunGo(t *testing.T) {
	m, err := Parse("0004_x.yaml", []byte("run:\n  - go: {name: orderTotals, down: dropTotals}\n  - go: {name: stamp}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Run) != 2 || m.Run[0].Func != "orderTotals" || m.Run[0].DownFunc != "dropTotals" || m.Run[1].DownFunc != "" || m.Run[1].Pos.Line != 3 {
		t.Fatalf("parsed %+v", m.Run)
	}
	renamed, _ := Parse("0004_x.yaml", []byte("run:\n  - go: {name: orderTotals2, down: dropTotals}\n  - go: {name: stamp}\n"))
	if SchemaChecksum(m) == SchemaChecksum(renamed) {
		t.Error("the checksum does not cover the function's name")
	}
	for _, c := range []struct{ file, want string }{
		{"run:\n  - go: {down: x}\n", "2:9: go needs name"},
		{"run:\n  - go: {name: \"1 bad\"}\n", `invalid function name "1 bad"`},
		{"run:\n  - go: orderTotals\n", "go must be a mapping"},
		{"run:\n  - go: {name: a, up: b}\n", `unknown key "up"`},
	} {
		_, err := Parse("0004_x.yaml", []byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.file, err, c.want)
		}
	}
}
