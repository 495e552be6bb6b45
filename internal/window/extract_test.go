package window

import (
	"testing"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestExtractWindow: an extract whose migration declares a validator for
// its parent has a window {$or: [V, S_before]} (invariant 5); one whose
// migration declares none has none; the proof's filter is the array, or
// its element k with keep: {first: k}.
func TestExtractWindow(t *testing.T) {
	ms, err := migration.Load(fstest.MapFS{
		"0001_a.yaml": {Data: []byte("collections:\n  posts:\n    validator:\n      $jsonSchema: {required: [title]}\n")},
		"0002_b.yaml": {Data: []byte("collections:\n  posts:\n    validator:\n      $jsonSchema: {required: [title, n]}\nrun:\n  - extract: {from: posts, array: comments, to: comments, ref: postId, keep: {first: 3}}\n")},
		"0003_c.yaml": {Data: []byte("run:\n  - extract: {from: posts, array: tags, to: tags, ref: postId}\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := version.FromMigrations(ms, version.AllowMissingFuncs(true))
	if err != nil {
		t.Fatal(err)
	}
	s := New(ms, reg)
	xs := s.Extracts("posts", 3)
	if len(xs) != 1 || xs[0].Version != 2 || xs[0].Index != 0 {
		t.Fatalf("extracts = %+v; want 0002's only (0003 declares no validator)", xs)
	}
	s1, s2 := ms[0].Collections[0].Validator, ms[1].Collections[0].Validator
	want := bson.D{{Key: "$or", Value: bson.A{s2, s1}}}
	if got := s.WithExtracts(s.At("posts", 2), "posts", xs); !equal(t, got, want) {
		t.Errorf("window = %v, want %v", got, want)
	}
	if got := s.WithExtracts(s2, "posts", nil); !equal(t, got, s2) {
		t.Errorf("closed = %v, want S2", got)
	}
	if got := xs[0].Remains(); !equal(t, got, bson.D{{Key: "comments.3", Value: bson.D{{Key: "$exists", Value: true}}}}) {
		t.Errorf("proof filter = %v", got)
	}
	open, err := s.OpenExtracts("posts", 3, func(Extract) (bool, error) { return true, nil })
	if err != nil || len(open) != 0 {
		t.Errorf("open when closed = %+v %v", open, err)
	}
}
