package bsonx

import "testing"

// TestIDOrder: example ids sort as MongoDB sorts _ids, numbers by value.
func TestIDOrder(t *testing.T) {
	ids := []string{`{"$oid":"650100000000000000000017"}`, `"b"`, `10`, `{"$oid":"650100000000000000000007"}`, `9`, `"a"`, `-1.5`, `null`}
	g := FailureGroup{ExampleIDs: ids}
	g.TrimTo(0)
	want := []string{`null`, `-1.5`, `9`, `10`, `"a"`, `"b"`, `{"$oid":"650100000000000000000007"}`, `{"$oid":"650100000000000000000017"}`}
	for i := range want {
		if g.ExampleIDs[i] != want[i] {
			t.Fatalf("order = %v, want %v", g.ExampleIDs, want)
		}
	}
}
