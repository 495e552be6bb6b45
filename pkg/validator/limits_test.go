package validator_test

import (
	"strings"
	"testing"

	"github.com/mongomig/mongomig/pkg/validator"
)

// TestPatternLengthLimit: a pattern or patternProperties key longer than
// MongoDB's 32764 bytes (RegexMatchExpression::kMaxPatternSize) is refused
// before it is compiled, and the message quotes at most 80 characters of it.
func TestPatternLengthLimit(t *testing.T) {
	ok := "^" + strings.Repeat("a", validator.MaxPatternLength-2) + "$"
	if _, err := validator.Compile(doc("pattern", ok)); err != nil {
		t.Errorf("a pattern of exactly %d bytes: %v", len(ok), err)
	}
	long := ok + "b"
	for _, schema := range [][]any{
		{"pattern", long},
		{"patternProperties", doc(long, doc("bsonType", "string"))},
	} {
		_, err := validator.Compile(doc(schema...))
		if err == nil || !strings.Contains(err.Error(), "regular expression is 32765 bytes long, more than MongoDB's limit of 32764 bytes") {
			t.Errorf("%s: %v", schema[0], err)
		}
		if err != nil && strings.Contains(err.Error(), strings.Repeat("a", 81)) {
			t.Errorf("%s: the message quotes the pattern: %.200s", schema[0], err)
		}
	}
}

// TestSchemaErrorsQuoteAnExcerpt: an unknown keyword of 300 characters is
// quoted as its first 80, in the message and in the path; a newline in a
// key cannot start a line of its own.
func TestSchemaErrorsQuoteAnExcerpt(t *testing.T) {
	key := strings.Repeat("k", 300)
	_, err := validator.Compile(doc(key, 1))
	if err == nil || strings.Contains(err.Error(), strings.Repeat("k", 81)) || !strings.Contains(err.Error(), strings.Repeat("k", 80)+`..."`) {
		t.Errorf("got %v", err)
	}
	_, err = validator.Compile(doc("properties", doc("a\nx.yaml:1:1: error: forged", doc("bsonType", "nope"))))
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %q", err)
	}
}
