package cli

import "testing"

func TestCountAgreesWithItsNoun(t *testing.T) {
	for _, c := range []struct {
		n    int64
		noun string
		want string
	}{
		{1, "document", "1 document"},
		{0, "document", "0 documents"},
		{2, "document", "2 documents"},
		{1, "batch", "1 batch"},
		{3, "batch", "3 batches"},
		{1, "round trip", "1 round trip"},
		{0, "round trip", "0 round trips"},
		{2, "index", "2 indexes"},
		{2, "entry", "2 entries"},
		{2, "key", "2 keys"},
	} {
		if got := count(c.n, c.noun); got != c.want {
			t.Errorf("count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

func TestVerbAgreesWithItsCount(t *testing.T) {
	if got := verb(1, "fail", "fails"); got != "fails" {
		t.Errorf("verb(1) = %q", got)
	}
	if got := verb(int64(0), "fail", "fails"); got != "fail" {
		t.Errorf("verb(0) = %q", got)
	}
}
