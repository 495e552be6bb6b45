package migration

import (
	"regexp"

	"go.yaml.in/yaml/v3"
)

// RunGo runs a Go function the team's binary registers
// (version.WithRunFunc) with the database, once. The file's checksums
// cover the function's name, not its code.
const RunGo RunKind = "go"

const goHint = "write `- go: {name: backfillTotals}` (and `down: undoTotals` for the function down runs), naming functions registered with version.WithRunFunc"

var funcNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,127}$`)

// goOp reads a Go run operation: the function's name, and optionally the
// function down runs.
func (p *parser) goOp(n *yaml.Node, ptr string) (RunOp, bool) {
	op := RunOp{Kind: RunGo}
	if !p.mapping(n, string(RunGo), goHint) {
		return op, false
	}
	keys := []string{"name", "down"}
	ok := p.integrityItem(n, ptr, "go", keys, keys[:1], func(key string, k, v *yaml.Node) {
		s, ok := p.str(v, goHint)
		if !ok {
			return
		}
		if !funcNameRE.MatchString(s) {
			p.errorf(v, "name the function as registered: letters, digits, _ . -, starting with a letter", "invalid function name %q", s)
			return
		}
		if key == "name" {
			op.Func = s
		} else {
			op.DownFunc = s
		}
	})
	return op, ok
}
