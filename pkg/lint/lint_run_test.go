package lint_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/pkg/lint"
)

// TestLintRunOperations: an extract whose parent's upgrade unsets the
// array is an error at the unset step; a drop with allowNonEmpty a warning.
func TestLintRunOperations(t *testing.T) {
	fsys := fstest.MapFS{"0002_comments.yaml": {Data: []byte(`description: Move comments out.
collections:
  posts:
    upgrade:
      - unset: [comments]
run:
  - extract: {from: posts, array: comments, to: comments, ref: postId}
  - dropCollection: {name: drafts, allowNonEmpty: true}
`)}}
	r, err := lint.Lint(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range r.Problems {
		got = append(got, p.Location()+": "+p.Message)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"0002_comments.yaml:5:9: the upgrade of posts unsets comments, which run operation 1 extracts",
		"0002_comments.yaml:8:5: run operation 2 drops drafts with whatever documents it holds",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("lint said\n%s\nwant %q", all, want)
		}
	}
}

// TestLintRunEmbed: an embed whose collection's upgrade unsets a copied
// field is an error at the step; an embed's copy is one of the rules in
// force, so a copies item claiming the same field is an error too.
func TestLintRunEmbed(t *testing.T) {
	fsys := fstest.MapFS{"0003_shop.yaml": {Data: []byte(`description: Orders keep the product's name.
collections:
  orders:
    upgrade:
      - unset: [productName]
    copies:
      - {via: productId, mode: mirror, fields: {productName: name}}
run:
  - embed: {into: orders, via: productId, from: products, mode: snapshot, fields: {productName: name, price: price}}
`)}}
	r, err := lint.Lint(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range r.Problems {
		got = append(got, p.Location()+": "+p.Message)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"0003_shop.yaml:5:9: the upgrade of orders unsets productName, which run operation 1 (embed from products) reads or writes",
		`field "productName" is claimed by a mirror copy of products.name and by a snapshot copy of products.name`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("lint said\n%s\nwant %q", all, want)
		}
	}
	clean := fstest.MapFS{"0003_shop.yaml": {Data: []byte("description: x\nrun:\n  - embed: {into: orders, via: productId, from: products, mode: snapshot, fields: {productName: name}}\n")}}
	if r, err := lint.Lint(clean); err != nil || len(r.Problems) != 0 {
		t.Errorf("a plain embed: %v, %+v; want no problem", err, r)
	}
}
