package validator

import (
	"math/bits"
	"regexp"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// pattern is a compiled pattern (or patternProperties name). It decides
// exactly as Go's regexp, which the package has always used; the common
// shape of a validator's pattern, a sequence of literal characters and
// character classes, each once, optional or repeated, anchored or not
// (^[^@\s]+@[^@\s]+$, ^[A-Z]{2}$, ^\d{5}$), is matched by seq without
// regexp's machine: a bit per position of the sequence, a table lookup per
// ASCII byte.
type pattern struct {
	re  *regexp.Regexp
	seq *seqMatcher // nil: the pattern has another shape
}

func compilePattern(src string) *pattern {
	return &pattern{re: regexp.MustCompile(src), seq: newSeqMatcher(src)}
}

// Match reports whether b contains a match of the pattern.
func (p *pattern) Match(b []byte) bool {
	if p.seq != nil {
		return p.seq.match(b)
	}
	return p.re.Match(b)
}

// seqMatcher matches a sequence of n single-character items, each
// matching once, at most once (skip) or any number of times (star and
// skip); x+ is x then x*. State i (bit i) means "item i is next", state n
// that the sequence matched.
type seqMatcher struct {
	n          int
	ranges     [][]rune    // per item: the characters it matches, as lo-hi pairs
	ascii      [128]uint64 // per ASCII character: the items that match it
	star, skip uint64
	begin, end bool // anchored at the start of the text (^, \A), at its end ($, \z)
}

// maxSeq bounds the items: state n must fit in a uint64. maxSeqSource
// bounds the length of a pattern worth parsing for them.
const (
	maxSeq       = 62
	maxSeqSource = 4096
)

// newSeqMatcher returns the matcher of src, nil when src has another shape
// (alternation, a repeated group, case folding of literals, line anchors,
// word boundaries, ...). It parses as regexp.Compile does.
func newSeqMatcher(src string) *seqMatcher {
	if len(src) > maxSeqSource {
		return nil // long patterns are parsed once, by regexp
	}
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	var subs []*syntax.Regexp
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	} else {
		subs = []*syntax.Regexp{re}
	}
	m := &seqMatcher{}
	for i, s := range subs {
		switch {
		case s.Op == syntax.OpBeginText && i == 0:
			m.begin = true
		case s.Op == syntax.OpEndText && i == len(subs)-1:
			m.end = true
		case !m.add(s):
			return nil
		}
	}
	for c := range m.ascii {
		for i, r := range m.ranges {
			if inRanges(r, rune(c)) {
				m.ascii[c] |= 1 << i
			}
		}
	}
	return m
}

// add appends the items of s; false when s is not a sequence of items.
func (m *seqMatcher) add(s *syntax.Regexp) bool {
	switch s.Op {
	case syntax.OpEmptyMatch:
		return true
	case syntax.OpCapture:
		return m.add(s.Sub[0])
	case syntax.OpConcat:
		for _, sub := range s.Sub {
			if !m.add(sub) {
				return false
			}
		}
		return true
	case syntax.OpLiteral:
		if s.Flags&syntax.FoldCase != 0 {
			return false
		}
		for _, r := range s.Rune {
			if !m.item([]rune{r, r}, false, false) {
				return false
			}
		}
		return true
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		r := class(s.Sub[0])
		switch {
		case r == nil:
			return false
		case s.Op == syntax.OpStar:
			return m.item(r, true, true)
		case s.Op == syntax.OpPlus:
			return m.item(r, false, false) && m.item(r, true, true)
		}
		return m.item(r, false, true)
	}
	if r := class(s); r != nil {
		return m.item(r, false, false)
	}
	return false
}

// class returns the characters s matches when it matches one character,
// else nil.
func class(s *syntax.Regexp) []rune {
	switch s.Op {
	case syntax.OpLiteral:
		if len(s.Rune) == 1 && s.Flags&syntax.FoldCase == 0 {
			return []rune{s.Rune[0], s.Rune[0]}
		}
	case syntax.OpCharClass:
		if len(s.Rune) > 0 {
			return s.Rune
		}
	case syntax.OpAnyCharNotNL:
		return []rune{0, '\n' - 1, '\n' + 1, unicode.MaxRune}
	case syntax.OpAnyChar:
		return []rune{0, unicode.MaxRune}
	}
	return nil
}

func (m *seqMatcher) item(ranges []rune, star, skip bool) bool {
	if m.n == maxSeq {
		return false
	}
	if star {
		m.star |= 1 << m.n
	}
	if skip {
		m.skip |= 1 << m.n
	}
	m.ranges = append(m.ranges, ranges)
	m.n++
	return true
}

// inRanges reports whether r is in one of the sorted lo-hi pairs.
func inRanges(pairs []rune, r rune) bool {
	lo, hi := 0, len(pairs)/2
	for lo < hi {
		mid := (lo + hi) / 2
		switch {
		case r < pairs[2*mid]:
			hi = mid
		case r > pairs[2*mid+1]:
			lo = mid + 1
		default:
			return true
		}
	}
	return false
}

// closure adds to states those reached by skipping optional items.
func (m *seqMatcher) closure(states uint64) uint64 {
	for {
		next := states | (states&m.skip)<<1
		if next == states {
			return states
		}
		states = next
	}
}

// match reports whether b contains a match, reading b as regexp does:
// UTF-8, an invalid byte being one U+FFFD.
func (m *seqMatcher) match(b []byte) bool {
	accept := uint64(1) << m.n
	start := m.closure(1)
	states := start
	for i := 0; ; {
		switch {
		case states&accept != 0 && (!m.end || i == len(b)):
			return true
		case i == len(b) || states == 0:
			return false
		}
		var hit uint64
		if c := b[i]; c < utf8.RuneSelf {
			hit = states & m.ascii[c]
			i++
		} else {
			r, w := utf8.DecodeRune(b[i:])
			i += w
			for s := states &^ accept; s != 0; s &= s - 1 {
				if j := bits.TrailingZeros64(s); inRanges(m.ranges[j], r) {
					hit |= 1 << j
				}
			}
		}
		states = m.closure(hit&m.star | hit<<1)
		if !m.begin {
			states |= start // a match may start at any position
		}
	}
}
