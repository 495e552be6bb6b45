package migration

import (
	"strings"
	"testing"
)

const schoolFile = `collections:
  students:
    references:
      - {path: classes._id, to: classes}
    copies:
      - via: classes._id
        mode: mirror
        fields: {credits: credits, title: name}
  comments:
    references:
      - {path: postId, to: posts, onDangling: unset}
  posts:
    aggregates:
      - {field: commentCount, op: count, from: comments, by: postId}
      - {field: best, op: max, from: comments, by: postId, of: score}
  orders:
    counters:
      - {path: number, in: counters, id: orders, field: seq}
`

// TestParseIntegrity: the four lists, their defaults and positions.
func TestParseIntegrity(t *testing.T) {
	m, err := Parse("0002_x.yaml", []byte(schoolFile))
	if err != nil {
		t.Fatal(err)
	}
	st, cm, po, or := m.Collection("students"), m.Collection("comments"), m.Collection("posts"), m.Collection("orders")
	if len(st.References) != 1 || st.References[0].OnDangling != DanglingReport || st.References[0].Pos.Line != 4 {
		t.Errorf("students references %+v", st.References)
	}
	c := st.Copies[0]
	if c.Mode != CopyMirror || c.Base() != "classes" || c.Key() != "_id" || len(c.Fields) != 2 || c.Fields[1] != (CopyField{Path: "title", From: "name", Pos: c.Fields[1].Pos}) {
		t.Errorf("students copies %+v", st.Copies)
	}
	if cm.References[0].OnDangling != DanglingUnset || len(po.Aggregates) != 2 || po.Aggregates[1].Of != "score" || or.Counters[0].ID != "orders" {
		t.Errorf("parsed %+v %+v %+v", cm.References, po.Aggregates, or.Counters)
	}
	if st.Aggregates != nil {
		t.Errorf("undeclared aggregates = %#v, want nil", st.Aggregates)
	}
}

// TestParseIntegrityErrors: each bad declaration gets file:line and what
// to write.
func TestParseIntegrityErrors(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"collections:\n  a:\n    references: {path: x}\n", "3:17: references must be a list"},
		{"collections:\n  a:\n    references:\n      - {path: x}\n", "4:9: a reference needs to"},
		{"collections:\n  a:\n    references:\n      - {path: x, to: b, onDangling: drop}\n", `invalid onDangling "drop"`},
		{"collections:\n  a:\n    references:\n      - {path: _id, to: b}\n", "cannot be _id"},
		{"collections:\n  a:\n    references:\n      - {path: x, to: b}\n      - {path: x, to: c}\n", `reference "x" is declared twice (first at line 4)`},
		{"collections:\n  a:\n    references:\n      - {path: x, to: mongomig_lock}\n", "reserved for mongomig"},
		{"collections:\n  a:\n    copies:\n      - {via: p._id, mode: copy, fields: {n: n}}\n", `invalid mode "copy"`},
		{"collections:\n  a:\n    copies:\n      - {via: p._id, mode: mirror, fields: {}}\n", "at least one field"},
		{"collections:\n  a:\n    copies:\n      - {via: p._id, mode: mirror, fields: {_id: n}}\n", "overlaps the reference"},
		{"collections:\n  a:\n    copies:\n      - {via: p._id, mode: mirror, fields: {n: n, n.x: y}}\n", `copied field "n.x" overlaps "n"`},
		{"collections:\n  a:\n    aggregates:\n      - {field: n, op: sum, from: b, by: aId}\n", "4:9: a sum aggregate needs of"},
		{"collections:\n  a:\n    aggregates:\n      - {field: n, op: count, from: b, by: aId, of: x}\n", "takes no of"},
		{"collections:\n  a:\n    aggregates:\n      - {field: n, op: avg, from: b, by: aId}\n", `invalid op "avg"`},
		{"collections:\n  a:\n    aggregates:\n      - {field: n, op: count, from: b, by: aId}\n      - {field: n, op: count, from: c, by: aId}\n", `overlaps "n" (line 4)`},
		{"collections:\n  a:\n    counters:\n      - {path: n, in: c, id: [1], field: seq}\n", "invalid counter id"},
		{"collections:\n  a:\n    counters:\n      - {path: n, in: c, id: x}\n", "a counter needs field"},
		{"collections:\n  a:\n    counters:\n      - {path: n, in: c, id: x, field: seq, step: 2}\n", `unknown key "step"`},
	} {
		_, err := Parse("0002_x.yaml", []byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.file, err, c.want)
		}
	}
}

// TestIntegrityRules: each list is replaced by the next file declaring
// it; an empty list removes it.
func TestIntegrityRules(t *testing.T) {
	m1, err := Parse("0001_a.yaml", []byte(schoolFile))
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Parse("0002_b.yaml", []byte("collections:\n  students:\n    copies:\n      - {via: classes._id, mode: snapshot, fields: {credits: credits}}\n  posts:\n    aggregates: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	rules := IntegrityRules([]*Migration{m1, m2})
	var names []string
	for _, r := range rules {
		names = append(names, r.Collection)
	}
	if strings.Join(names, ",") != "students,comments,orders" {
		t.Fatalf("collections %v", names)
	}
	st := rules[0]
	if len(st.References) != 1 || st.Copies[0].Mode != CopySnapshot || st.File["copies"] != "0002_b.yaml" || st.File["references"] != "0001_a.yaml" {
		t.Errorf("students %+v", st)
	}
}

// TestIntegrityChecksum: declarations join the schema checksum only when
// present (the sample files' pinned checksums are unchanged:
// TestSchemaChecksumIsStable), and a change to one changes it.
func TestIntegrityChecksum(t *testing.T) {
	sum := func(s string) string {
		m, err := Parse("0001_a.yaml", []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return SchemaChecksum(m)
	}
	base := "collections:\n  a:\n    validationLevel: strict\n"
	if sum(base) == sum(base+"    references: [{path: x, to: b}]\n") {
		t.Error("a reference does not change the checksum")
	}
	if sum(base+"    references: [{path: x, to: b}]\n") == sum(base+"    references: [{path: x, to: b, onDangling: delete}]\n") {
		t.Error("onDangling does not change the checksum")
	}
	if sum(base+"    copies: [{via: p._id, mode: mirror, fields: {n: n}}]\n") == sum(base+"    copies: [{via: p._id, mode: snapshot, fields: {n: n}}]\n") {
		t.Error("a copy's mode does not change the checksum")
	}
}
