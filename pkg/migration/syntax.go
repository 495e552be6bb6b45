package migration

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxNodeErrors bounds how many tags and merge keys one file reports.
const maxNodeErrors = 10

// checkNodes refuses, as written (aliases not expanded), what the YAML
// library accepts but mongomig would misread: a tag on a mapping or a
// list, which changes nothing (!!set, !custom: read as a plain mapping),
// a custom tag on a key, and merge keys (<<), which would hide keys a
// review should see and are not what `each` expects. Tags on values
// (!!str 1) are the value parser's to judge.
func (p *parser) checkNodes(root *yaml.Node) bool {
	errs := 0
	stack := []*yaml.Node{root}
	for len(stack) > 0 && errs < maxNodeErrors {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch {
		case n.Kind == yaml.ScalarNode && n.Tag == "!!merge":
			p.errorf(n, "write the keys out: mongomig does not merge mappings; an alias (*name) may stand for a whole value",
				"merge key %q is not supported", n.Value)
			errs++
		case n.Style&yaml.TaggedStyle != 0 && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode):
			p.errorf(n, "remove the tag: a mapping or a list is read as written whatever its tag; values that are not plain JSON use MongoDB Extended JSON, such as "+extJSONKeys["$date"],
				"YAML tag %s on %s is not supported", n.Tag, kindName(n))
			errs++
		}
		for i := len(n.Content) - 1; i >= 0; i-- {
			stack = append(stack, n.Content[i])
		}
	}
	return errs == 0
}

// composerProblems are YAML errors that come with no line (the library's
// composer adds none) and are not on line 1.
var composerProblems = []string{"anchor '", "exceeded max depth", "document contains excessive aliasing"}

// unpositioned places a YAML error that names no line. The library leaves
// "line N" out of a scanner or parser error whose marks are both on the
// first line (go.yaml.in/yaml/v3 decode.go, parser.fail: it prints the
// line only when not 0), so such an error is on line 1; an unknown anchor
// is where it is first used.
func unpositioned(msg string, data []byte) (line, col int) {
	if name, ok := strings.CutPrefix(msg, "unknown anchor '"); ok {
		name, _, _ = strings.Cut(name, "'")
		if i := bytes.Index(data, []byte("*"+name)); i >= 0 {
			return lineCol(data, i+1)
		}
		return 0, 0
	}
	for _, c := range composerProblems {
		if strings.HasPrefix(msg, c) {
			return 0, 0
		}
	}
	return 1, 1
}
