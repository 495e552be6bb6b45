package migration

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Parse parses one migration file. file is its path within the migration
// directory; its base name must follow NNNN_snake_name.ext. On failure the
// error is an [ErrorList] naming every problem found, and the migration
// returned holds what could be read, with Broken set (so lint can still
// check its schemas); never apply it.
func Parse(file string, data []byte) (*Migration, error) {
	p := &parser{file: file, pos: map[string]Pos{}}
	m := p.parse(data)
	if err := p.errs.err(); err != nil {
		m.Broken = true
		return m, err
	}
	return m, nil
}

// Checksum returns the checksum recorded for a file's bytes.
func Checksum(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

type parser struct {
	file string
	errs ErrorList
	pos  map[string]Pos
}

// add records a problem. String arguments are values from the file: each
// is cut to a short excerpt, so no message echoes a whole file.
func (p *parser) add(pos Pos, hint, format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = excerpt(s) // a shown (kindName) is cut already
		}
	}
	p.errs = append(p.errs, &Error{File: p.file, Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func posOf(n *yaml.Node) Pos { return Pos{Line: n.Line, Column: n.Column} }

func (p *parser) errorf(n *yaml.Node, hint, format string, args ...any) {
	p.add(posOf(n), hint, format, args...)
}

func (p *parser) parse(data []byte) *Migration {
	version, name := p.fileName()
	m := &Migration{Version: version, Name: name, File: p.file, Checksum: Checksum(data), positions: p.pos}

	if len(bytes.TrimSpace(data)) == 0 {
		p.add(Pos{}, HintFromTemplate, "file is empty")
		return m
	}
	if !p.checkText(data) {
		return m
	}
	if strings.HasSuffix(strings.ToLower(p.file), ".json") {
		// YAML accepts what JSON does not (trailing commas, comments):
		// a .json file must be JSON.
		var v any
		var se *json.SyntaxError
		if err := json.Unmarshal(data, &v); errors.As(err, &se) {
			line, col := lineCol(data, int(se.Offset))
			p.add(Pos{Line: line, Column: col}, "fix the JSON syntax (or use .yaml for YAML)", "syntax error: %s", se.Error())
			return m
		}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		p.yamlError(err, data)
		return m
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		p.errorf(&extra, "keep one migration per file", "file holds more than one YAML document")
	}
	if !p.shapeOK(&doc) || !p.checkNodes(&doc) {
		return m
	}
	p.top(m, doc.Content[0])
	return m
}

// shapeOK checks the node tree's size and depth before anything recurses
// into it, naming the limit and the value that exceeds it.
func (p *parser) shapeOK(doc *yaml.Node) bool {
	if countValues(doc) > maxValues {
		p.errorf(doc, "split it into several migrations",
			"file holds more than %d values (mappings, lists and scalars), the limit", maxValues)
		return false
	}
	if n, recursive := aliasProblem(doc); n != nil {
		if recursive {
			p.errorf(n, "an anchored value cannot contain an alias to itself", "alias *%s makes the document recursive", n.Value)
		} else {
			p.errorf(n, "repeat values less, or write them out",
				"aliases expand the document past %d values (mappings, lists and scalars), the limit", maxValues)
		}
		return false
	}
	if n := tooDeep(doc); n != nil {
		p.errorf(n, fmt.Sprintf("flatten the structure: MongoDB refuses documents and commands nested deeper than %d levels", MaxDepth),
			"nesting deeper than %d levels of mappings and lists (aliases expanded), the limit", MaxDepth)
		return false
	}
	return true
}

// countValues counts the nodes as written (aliases not expanded), up to
// just past maxValues.
func countValues(root *yaml.Node) int {
	n, stack := 0, []*yaml.Node{root}
	for len(stack) > 0 && n <= maxValues {
		top := stack[len(stack)-1]
		stack = append(stack[:len(stack)-1], top.Content...)
		n++
	}
	return n
}

// tooDeep returns the first mapping or list nested MaxDepth+1 levels deep
// (following aliases), or nil. It runs after aliasProblem, so the tree
// has no cycle and its expansion is bounded.
func tooDeep(root *yaml.Node) *yaml.Node {
	height := map[*yaml.Node]int{}
	var h func(n *yaml.Node) int
	h = func(n *yaml.Node) int {
		n = deref(n)
		if v, ok := height[n]; ok {
			return v
		}
		v := 0
		if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
			for _, c := range n.Content {
				v = max(v, h(c))
			}
			v++
		}
		height[n] = v
		return v
	}
	n := deref(root)
	if h(n) <= MaxDepth {
		return nil
	}
	// Walk down the deepest branch to the first level past the limit.
	for depth := 1; depth <= MaxDepth; depth++ {
		for _, c := range n.Content {
			if c := deref(c); h(c) == h(n)-1 {
				n = c
				break
			}
		}
	}
	return n
}

// aliasProblem returns the first alias node that refers to one of its own
// ancestors (recursive), or the node whose expansion makes the document
// larger than maxValues, or nil.
func aliasProblem(root *yaml.Node) (bad *yaml.Node, recursive bool) {
	const visiting = -1
	size := map[*yaml.Node]int{}
	var walk func(n, via *yaml.Node) int
	walk = func(n, via *yaml.Node) int {
		if bad != nil {
			return 0
		}
		if n.Kind == yaml.AliasNode {
			if n.Alias == nil {
				return 1
			}
			return walk(n.Alias, n)
		}
		switch s, seen := size[n]; {
		case seen && s == visiting:
			bad, recursive = via, true
			return 0
		case seen:
			return s
		}
		size[n] = visiting
		total := 1
		for _, c := range n.Content {
			total += walk(c, via)
			if total > maxValues {
				if bad == nil {
					bad = n
				}
				return total
			}
		}
		size[n] = total
		return total
	}
	walk(root, nil)
	return bad, recursive
}

// yamlParserProblems are the messages of the YAML library's parser errors
// (go.yaml.in/yaml/v3 parserc.go). For these its "line N" is the 0-based
// line of the construct being parsed (an unclosed "[" on line 7 says
// "line 6"), or of the problem when that construct starts on the first
// line; parser.fail in its decode.go adds 1 only for scanner errors.
var yamlParserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected <document start>": true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"found duplicate %YAML directive":        true,
	"found duplicate %TAG directive":         true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// yamlError turns the YAML library's syntax errors ("yaml: line 3: ...")
// into positioned errors; for .json files encoding/json finds the byte.
func (p *parser) yamlError(err error, data []byte) {
	line, col := 0, 0
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var se *json.SyntaxError
	var v any
	switch {
	case strings.HasSuffix(strings.ToLower(p.file), ".json") && errors.As(json.Unmarshal(data, &v), &se):
		// For JSON, encoding/json pinpoints the byte; YAML's guess is vaguer.
		line, col = lineCol(data, int(se.Offset))
		msg = se.Error()
	default:
		if n, _ := fmt.Sscanf(msg, "line %d:", &line); n == 1 {
			msg = strings.TrimSpace(msg[strings.IndexByte(msg, ':')+1:])
			col = 1
			if yamlParserProblems[msg] {
				// The library numbers a parser error's line from 0
				// (its scanner errors from 1).
				line++
			}
		} else {
			line, col = unpositioned(msg, data)
		}
		// An error at the end of the stream (a "[" never closed) names
		// the line after the last: the last line with content is meant.
		line = min(line, lastContentLine(data))
	}
	hint := "fix the YAML (or JSON) syntax"
	if line > 0 && lineHasTabIndent(data, line) {
		hint = "indent with spaces; YAML does not allow tabs for indentation"
	}
	p.add(Pos{Line: line, Column: col}, hint, "syntax error: %s", msg)
}

// lastContentLine is the 1-based number of data's last line that holds
// more than white space.
func lastContentLine(data []byte) int {
	lines := bytes.Split(data, []byte("\n"))
	for i := len(lines) - 1; i > 0; i-- {
		if len(bytes.TrimSpace(lines[i])) > 0 {
			return i + 1
		}
	}
	return 1
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(data []byte, off int) (int, int) {
	off = min(max(off, 1), len(data))
	before := data[:off]
	line := bytes.Count(before[:off-1], []byte("\n")) + 1
	// The offending byte is data[off-1]; columns start at 1.
	return line, off - 1 - bytes.LastIndexByte(before[:off-1], '\n')
}

func lineHasTabIndent(data []byte, line int) bool {
	lines := bytes.Split(data, []byte("\n"))
	if line-1 >= len(lines) {
		return false
	}
	l := lines[line-1]
	trimmed := bytes.TrimLeft(l, " \t")
	return bytes.ContainsRune(l[:len(l)-len(trimmed)], '\t')
}

var topKeys = []string{"description", "collections", "run", "views", "buckets"}

func (p *parser) top(m *Migration, n *yaml.Node) {
	n = deref(n)
	p.pos[""] = posOf(n)
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "a migration file is a mapping with the keys description and collections", "expected a mapping at the top level, found %s", kindName(n))
		return
	}
	sawCollections := false
	p.each(n, "", topKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "description":
			m.Description, _ = p.str(v, "the description is free text")
		case "collections":
			sawCollections = true
			m.Collections = p.collections(v)
		case "run":
			sawCollections = true // a migration may be run operations alone
			m.Run = p.run(v)
		case "views":
			sawCollections = true // a migration may declare views alone
			m.Views = p.views(v)
		case "buckets":
			sawCollections = true // a migration may declare families alone
			m.Buckets = p.buckets(v)
		}
	})
	if !sawCollections {
		p.errorf(n, "add `collections:` with one entry per collection the migration changes", "missing key \"collections\"")
	}
}

// each walks a mapping in order, rejecting duplicate and unknown keys, and
// records the position of every value under ptr/key. known == nil accepts
// any key.
func (p *parser) each(n *yaml.Node, ptr string, known []string, fn func(key string, k, v *yaml.Node)) {
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "use a plain string as the key", "expected a string key, found %s", kindName(k))
			continue
		}
		key := k.Value
		if prev, dup := seen[key]; dup {
			p.errorf(k, fmt.Sprintf("remove one of them (first at line %d)", prev.Line), "key %q is declared twice", key)
			continue
		}
		seen[key] = k
		if known != nil && !contains(known, key) {
			p.errorf(k, hintKeys(key, known), "unknown key %q", key)
			continue
		}
		p.pos[ptr+"/"+escapePtr(key)] = posOf(k)
		fn(key, k, v)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func escapePtr(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// deref follows aliases (*anchor) to the node they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return deref(n.Content[0])
	}
	return n
}

// shown is a description of a value already cut to an excerpt, which add
// passes on as it is.
type shown string

func kindName(n *yaml.Node) shown {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing (null)"
		}
		return shown(fmt.Sprintf("%q", excerpt(n.Value)))
	}
	return "something else"
}

func (p *parser) str(n *yaml.Node, hint string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errorf(n, hint, "expected a string, found %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

func (p *parser) boolean(n *yaml.Node, key string) bool {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		var b bool
		if err := n.Decode(&b); err == nil {
			return b
		}
	}
	p.errorf(n, "write true or false", "%s must be a boolean, found %s", key, kindName(n))
	return false
}

func (p *parser) mapping(n *yaml.Node, what, hint string) bool {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, hint, "%s must be a mapping, found %s", what, kindName(n))
		return false
	}
	return true
}
