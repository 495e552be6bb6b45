package migration

import (
	"strings"
	"testing"
)

// TestParseRunEmbed: embed's keys are a copies item's (via, mode, fields)
// plus into and from; a bad one gets its line.
func TestParseRunEmbed(t *testing.T) {
	m, err := Parse("0003_x.yaml", []byte(`run:
  - embed: {into: orders, via: productId, from: products, mode: snapshot, fields: {productName: name, price: price}}
  - embed:
      into: students
      via: classes._id
      from: classes
      mode: mirror
      fields: {name: name}
`))
	if err != nil {
		t.Fatal(err)
	}
	e, s := m.Run[0].Embed, m.Run[1].Embed
	if len(m.Run) != 2 || e.Into != "orders" || e.From != "products" || e.Copy.Mode != CopySnapshot || len(e.Copy.Fields) != 2 ||
		s.Copy.Base() != "classes" || s.Paths()[0] != "classes.name" || m.Run[1].Pos.Line != 3 {
		t.Fatalf("parsed %+v / %+v", e, s)
	}
	for _, c := range []struct{ file, want string }{
		{"run:\n  - embed: {into: orders, via: productId, from: products, fields: {n: name}}\n", "2:12: embed needs mode"},
		{"run:\n  - embed: {into: orders, via: productId, from: products, mode: copy, fields: {n: name}}\n", `invalid mode "copy"`},
		{"run:\n  - embed: {into: orders, via: _id, from: products, mode: mirror, fields: {n: name}}\n", "via cannot be _id"},
		{"run:\n  - embed: {into: orders, via: productId, from: products, mode: mirror, fields: {productId: name}}\n", `overlaps the reference "productId"`},
		{"run:\n  - embed: {into: orders, via: productId, from: products, mode: mirror, fields: {pid: _id}}\n", "copies the source's _id"},
		{"run:\n  - embed: {into: orders, via: productId, from: products, mode: mirror, fields: {}}\n", "at least one field"},
		{"run:\n  - embed: {into: orders, via: productId, from: products, mode: mirror, fields: {n: name}, keep: x}\n", `unknown key "keep"`},
	} {
		_, err := Parse("0003_x.yaml", []byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.file, err, c.want)
		}
	}
}

// TestEmbedIntegrityRules: an embed puts its copy, and its reference when
// none is declared at via, among the rules in force, which `check`
// checks; a later file's copies list replaces it.
func TestEmbedIntegrityRules(t *testing.T) {
	m3, err := Parse("0003_x.yaml", []byte(`collections:
  students:
    references:
      - {path: classes._id, to: classes, onDangling: unset}
run:
  - embed: {into: orders, via: productId, from: products, mode: snapshot, fields: {productName: name}}
  - embed: {into: students, via: classes._id, from: classes, mode: mirror, fields: {name: name}}
`))
	if err != nil {
		t.Fatal(err)
	}
	rules := IntegrityRules([]*Migration{m3})
	if len(rules) != 2 {
		t.Fatalf("rules %+v", rules)
	}
	o, s := rules[1], rules[0]
	if o.Collection != "orders" || len(o.Copies) != 1 || o.Copies[0].Mode != CopySnapshot || len(o.References) != 1 || o.References[0].To != "products" || o.File["copies"] != "0003_x.yaml" {
		t.Errorf("orders rules %+v", o)
	}
	if s.Collection != "students" || len(s.References) != 1 || s.References[0].OnDangling != DanglingUnset || len(s.Copies) != 1 || s.Copies[0].Via != "classes._id" {
		t.Errorf("students rules %+v: want the declared reference kept and the mirror added", s)
	}
	m4, err := Parse("0004_x.yaml", []byte("collections:\n  orders:\n    copies: []\n    references: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	if rules := IntegrityRules([]*Migration{m3, m4}); len(rules) != 1 || rules[0].Collection != "students" {
		t.Errorf("after 0004 empties the orders' lists: %+v", rules)
	}
	plain, _ := Parse("0003_x.yaml", []byte("run:\n  - embed: {into: orders, via: productId, from: products, mode: snapshot, fields: {productName: name}}\n"))
	other, _ := Parse("0003_x.yaml", []byte("run:\n  - embed: {into: orders, via: productId, from: products, mode: mirror, fields: {productName: name}}\n"))
	if SchemaChecksum(plain) == SchemaChecksum(other) {
		t.Error("the checksum does not cover the embed's mode")
	}
}
