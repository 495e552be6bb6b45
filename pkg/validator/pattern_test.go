package validator

import (
	"regexp"
	"testing"
)

// seqPatterns are the patterns TestSeqMatcherAgreesWithRegexp tries; fast
// says whether they take seqMatcher (the others stay with regexp).
var seqPatterns = []struct {
	src  string
	fast bool
}{
	{`^[^@\s]+@[^@\s]+$`, true}, {`^[A-Z]{2}$`, true}, {`^\d{3}-\d{4}$`, true}, {`^\d{5}(\d{4})?$`, false},
	{``, true}, {`^$`, true}, {`a`, true}, {`^a`, true}, {`a$`, true}, {`^a*$`, true}, {`^.+$`, true},
	{`x?y`, true}, {`a.c`, true}, {`^é+$`, true}, {`^\p{L}+$`, true}, {`[^a]`, true}, {`^(ab)$`, true},
	{`\Aab\z`, true}, {`^a{2,4}$`, false}, {`^a{2,}b`, true}, {`a+?b`, true}, {`^[a-c]*?c$`, true},
	{`(?s).`, true}, {`^\x{FFFD}$`, true}, {`^[\x{10000}-\x{10FFFF}]$`, true},
	{`(?i)abc`, false}, {`(?i)[a-c]x`, false}, {`a|b`, true}, {`ab|cd`, false}, {`^(ab)+$`, false}, {`\bfoo`, false},
	{`(?m)^a$`, false}, {`a^b`, false}, {`^^a`, false}, {`a$$`, false},
}

var seqInputs = []string{
	"", "a", "aa", "aaa", "aaaaa", "b", "ab", "aab", "abc", "aXc", "a\nc", "ADA", "AB", "Ab", "xy", "y", "x",
	"ada@example.com", "a@b@c", "a b@c", "@b", "a@", "a@b\n", "\n", "a\n", "\xff", "é", "éé", "\xc3", "é\xc3",
	"123-4567", "123-45678", "12345", "123456789", "ábc", "c", "bc", "abcc", "\U0001F600", "\xef\xbf\xbd",
	"foo", "a foo", "xfoo", "ba", "zzz", "ab\x00", "\x00",
}

func TestSeqMatcherAgreesWithRegexp(t *testing.T) {
	for _, p := range seqPatterns {
		m := newSeqMatcher(p.src)
		if (m != nil) != p.fast {
			t.Errorf("%q: seqMatcher %v, want %v", p.src, m != nil, p.fast)
		}
		if m == nil {
			continue
		}
		re := regexp.MustCompile(p.src)
		for _, in := range seqInputs {
			if got, want := m.match([]byte(in)), re.MatchString(in); got != want {
				t.Errorf("%q on %q: %v, regexp says %v", p.src, in, got, want)
			}
		}
	}
}

// FuzzSeqMatcher: wherever seqMatcher takes a pattern, it answers as
// regexp does.
func FuzzSeqMatcher(f *testing.F) {
	for _, p := range seqPatterns {
		for _, in := range seqInputs[:8] {
			f.Add(p.src, []byte(in))
		}
	}
	f.Fuzz(func(t *testing.T, src string, in []byte) {
		re, err := regexp.Compile(src)
		if err != nil {
			return
		}
		if m := newSeqMatcher(src); m != nil && m.match(in) != re.Match(in) {
			t.Fatalf("%q on %q: %v, regexp says %v", src, in, m.match(in), re.Match(in))
		}
	})
}
