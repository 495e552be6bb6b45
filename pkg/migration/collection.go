package migration

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.yaml.in/yaml/v3"
)

var collectionKeys = []string{"validator", "validationLevel", "validationAction", "upgrade", "downgrade", "indexes", "examples", "references", "copies", "aggregates", "counters", "options"}

func (p *parser) collections(n *yaml.Node) []*Collection {
	if !p.mapping(n, "collections", "write one entry per collection: `collections: {users: {...}}`") {
		return nil
	}
	var out []*Collection
	p.each(n, "/collections", nil, func(name string, k, v *yaml.Node) {
		if msg, why := collectionNameProblem(name); msg != "" {
			p.errorf(k, "use the collection's real name"+why, "invalid collection name %s: %s", quoteName(name), msg)
			return
		}
		out = append(out, p.collection(name, k, v))
	})
	return out
}

// MaxCollectionNameLen is the longest collection name, in bytes: MongoDB
// limits a namespace, "<database>.<collection>", to 255 bytes
// (NamespaceString::MaxNsCollectionLen), and a database name has at least
// one byte. A longer database name lowers the limit; the server says so.
const MaxCollectionNameLen = 253

// collectionNameProblem applies MongoDB's rules for a collection name
// (NamespaceString::validCollectionName, src/mongo/db/namespace_string.h:
// not empty, no leading '.', no '$', no NUL; the "system." prefix is
// reserved; the namespace length limit) and mongomig's own: no control
// characters or other non-printable characters, so that a name printed in
// a report or a table never moves the cursor, colours the terminal or
// forges a line; and the "mongomig_" prefix, for mongomig's collections.
// The second result, when not empty, explains mongomig's own rule in the
// hint.
func collectionNameProblem(name string) (msg, why string) {
	const forge = "; mongomig refuses control and non-printable characters in collection names, which it prints: they could drive a terminal or forge a line of its output"
	switch {
	case name == "":
		return "it is empty", ""
	case name[0] == '.':
		return "it starts with '.', which MongoDB refuses", ""
	case strings.Contains(name, "$"):
		return "it contains '$', which MongoDB refuses", ""
	case strings.HasPrefix(name, "system."):
		return "names starting with \"system.\" are reserved by MongoDB", ""
	case strings.HasPrefix(name, "mongomig_"):
		return "names starting with \"mongomig_\" are reserved for mongomig's own collections", ""
	case !utf8.ValidString(name):
		return "it is not valid UTF-8", ""
	case len(name) > MaxCollectionNameLen:
		return fmt.Sprintf("it is %d bytes long; MongoDB limits <database>.<collection> to 255 bytes, so a name has at most %d", len(name), MaxCollectionNameLen), ""
	}
	for _, r := range name {
		switch {
		case r == 0:
			return "it contains a NUL character, which MongoDB refuses", ""
		case unicode.IsControl(r):
			return fmt.Sprintf("it contains a control character (U+%04X)", r), forge
		case !unicode.IsPrint(r):
			return fmt.Sprintf("it contains a non-printable character (U+%04X)", r), forge
		}
	}
	return "", ""
}

// quoteName quotes a collection name for a message, escaping what is not
// printable and cutting a long one short.
func quoteName(name string) string {
	const max = 64
	if len(name) <= max {
		return fmt.Sprintf("%q", name)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return fmt.Sprintf("%q...", name[:cut])
}

func (p *parser) collection(name string, k, n *yaml.Node) *Collection {
	c := &Collection{Name: name, Pos: posOf(k)}
	ptr := "/collections/" + escapePtr(name)
	if !p.mapping(n, fmt.Sprintf("collection %q", name), "declare validator, validationLevel, validationAction, upgrade, downgrade, indexes or examples") {
		return c
	}
	if len(n.Content) == 0 {
		p.errorf(k, "declare at least one of: "+strings.Join(collectionKeys, ", ")+"; or remove the collection", "collection %q declares nothing", name)
	}
	p.each(n, ptr, collectionKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "validator":
			c.Validator = p.validator(v, ptr+"/validator")
		case "validationLevel":
			if s, ok := p.str(v, "write off, moderate or strict"); ok {
				c.ValidationLevel = Level(s)
				if !contains(Levels, s) {
					p.errorf(v, "write off, moderate or strict (MongoDB's default is strict), or constraint where the server has it (MongoDB 9.0)", "invalid validationLevel %q", s)
				}
			}
		case "validationAction":
			if s, ok := p.str(v, "write error or warn"); ok {
				c.ValidationAction = Action(s)
				if !contains(Actions, s) {
					p.errorf(v, "write error or warn (MongoDB's default is error), or errorAndLog where the server has it (MongoDB 8.1)", "invalid validationAction %q", s)
				}
			}
		case "upgrade":
			c.Upgrade = p.steps(v, ptr+"/upgrade", "upgrade")
		case "downgrade":
			c.Downgrade = p.steps(v, ptr+"/downgrade", "downgrade")
		case "indexes":
			c.Indexes = p.indexes(v, ptr+"/indexes")
		case "examples":
			c.Examples = p.examples(v, ptr+"/examples")
		case "references":
			c.References = p.references(v, ptr+"/references")
		case "copies":
			c.Copies = p.copies(v, ptr+"/copies")
		case "aggregates":
			c.Aggregates = p.aggregates(v, ptr+"/aggregates")
		case "counters":
			c.Counters = p.counters(v, ptr+"/counters")
		case "options":
			c.Options = p.collectionOptions(v, ptr+"/options")
		}
	})
	return c
}

// validator accepts exactly {$jsonSchema: {...}}: mongomig checks validators
// itself (lint, validate, validate-on-write), which it can only do for
// $jsonSchema. The schema's own dialect is checked by package validator.
func (p *parser) validator(n *yaml.Node, ptr string) bson.D {
	const hint = "write `validator: {$jsonSchema: {bsonType: object, ...}}`; mongomig supports $jsonSchema validators only"
	if !p.mapping(n, "validator", hint) {
		return nil
	}
	var out bson.D
	p.each(n, ptr, []string{"$jsonSchema"}, func(key string, k, v *yaml.Node) {
		if !p.mapping(v, "$jsonSchema", "write the schema as a mapping: `$jsonSchema: {bsonType: object, properties: {...}}`") {
			return
		}
		val, ok := p.value(v, ptr+"/$jsonSchema")
		if ok {
			out = bson.D{{Key: "$jsonSchema", Value: val}}
		}
	})
	if len(n.Content) == 0 {
		p.errorf(n, hint, "validator is empty")
	}
	return out
}

var exampleKeys = []string{"before", "after"}

func (p *parser) examples(n *yaml.Node, ptr string) []Example {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "write a list: `examples: [{before: {...}, after: {...}}]`", "examples must be a list, found %s", kindName(n))
		return nil
	}
	var out []Example
	for i, item := range n.Content {
		item = deref(item)
		iptr := fmt.Sprintf("%s/%d", ptr, i)
		p.pos[iptr] = posOf(item)
		if !p.mapping(item, "an example", "write `{before: {...}, after: {...}}`") {
			continue
		}
		ex := Example{Pos: posOf(item)}
		var sawBefore, sawAfter bool
		p.each(item, iptr, exampleKeys, func(key string, k, v *yaml.Node) {
			if key == "before" {
				sawBefore = true
			} else {
				sawAfter = true
			}
			if !p.mapping(v, key, "write the document as a mapping") {
				return
			}
			val, ok := p.value(v, iptr+"/"+key)
			if !ok {
				return
			}
			if key == "before" {
				ex.Before = val.(bson.D)
			} else {
				ex.After = val.(bson.D)
			}
		})
		if !sawBefore || !sawAfter {
			p.errorf(item, "give both the document before the upgrade and the expected document after it", "an example needs both before and after")
			continue
		}
		out = append(out, ex)
	}
	return out
}
