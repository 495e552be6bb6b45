package migration

import (
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.yaml.in/yaml/v3"

	"github.com/mongomig/mongomig/pkg/buckets"
)

// BucketFamily is what one migration declares for a time-bucketed family
// (the `buckets:` key): one collection per period, named by Pattern
// ("events_{yyyy}_{mm}"), created Ahead periods ahead and dropped once
// older than Keep periods, each with the family's validator and indexes.
// The first declaration of a pattern gives its period; later migrations
// change the validator, indexes, ahead and keep of every member
// (docs/file-format.md, Time-bucketed collections).
type BucketFamily struct {
	// Pattern is the family's key: the member name with placeholders.
	Pattern string `json:"pattern"`
	// Period is day, week or month ("": not given, as a later migration
	// may leave it).
	Period buckets.Period `json:"period,omitempty"`
	// Ahead is how many periods after the current one get their member
	// created ahead of time (nil: not given).
	Ahead *int `json:"ahead,omitempty"`
	// Keep is how many periods are kept, the current one included: a
	// member older than that is dropped (nil: not given; 0: never drop).
	Keep *int `json:"keep,omitempty"`
	// Validator, ValidationLevel, ValidationAction and Indexes are those
	// of a collection (see [Collection]), for every member.
	Validator        bson.D  `json:"validator,omitempty"`
	ValidationLevel  Level   `json:"validationLevel,omitempty"`
	ValidationAction Action  `json:"validationAction,omitempty"`
	Indexes          Indexes `json:"indexes"`
	// Pos is where the family's key is in the file.
	Pos Pos `json:"pos"`
}

// Family is the family's naming (period inferred from the pattern when
// the declaration does not give it).
func (b *BucketFamily) Family() (buckets.Family, error) { return buckets.New(b.Pattern, b.Period) }

// MaxBucketsAhead and MaxBucketsKept bound ahead and keep: each member is
// a collection, and a typo (ahead: 3000) must not create thousands.
const (
	MaxBucketsAhead = 366
	MaxBucketsKept  = 3660
)

var bucketKeys = []string{"period", "ahead", "keep", "validator", "validationLevel", "validationAction", "indexes"}

func (p *parser) buckets(n *yaml.Node) []*BucketFamily {
	if !p.mapping(n, "buckets", "write one entry per family: `buckets: {\"events_{yyyy}_{mm}\": {period: month, ahead: 2, keep: 6}}`") {
		return nil
	}
	var out []*BucketFamily
	p.each(n, "/buckets", nil, func(pattern string, k, v *yaml.Node) {
		out = append(out, p.bucketFamily(pattern, k, v))
	})
	return out
}

func (p *parser) bucketFamily(pattern string, k, n *yaml.Node) *BucketFamily {
	b := &BucketFamily{Pattern: pattern, Pos: posOf(k)}
	ptr := "/buckets/" + escapePtr(pattern)
	if !p.mapping(n, fmt.Sprintf("bucket family %q", pattern), "declare period, ahead, keep, validator, validationLevel, validationAction or indexes") {
		return b
	}
	p.each(n, ptr, bucketKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "period":
			if s, ok := p.str(v, "write day, week or month"); ok {
				b.Period = buckets.Period(s)
				if !contains([]string{"day", "week", "month"}, s) {
					p.errorf(v, "write day, week or month", "invalid period %q", s)
				}
			}
		case "ahead":
			b.Ahead = p.bucketCount(v, "ahead", 0, MaxBucketsAhead)
		case "keep":
			b.Keep = p.bucketCount(v, "keep", 0, MaxBucketsKept)
		case "validator":
			b.Validator = p.validator(v, ptr+"/validator")
		case "validationLevel":
			b.ValidationLevel = Level(p.validationSetting(v, "validationLevel", Levels))
		case "validationAction":
			b.ValidationAction = Action(p.validationSetting(v, "validationAction", Actions))
		case "indexes":
			b.Indexes = p.indexes(v, ptr+"/indexes")
		}
	})
	period := b.Period
	if !contains([]string{"day", "week", "month"}, string(period)) {
		period = "" // said above; the pattern is checked on its own
	}
	f, err := buckets.New(pattern, period)
	if err != nil {
		p.errorf(k, "write the pattern with {yyyy} and {mm} (month), {yyyy}, {mm} and {dd} (day) or {yyyy} and {ww} (ISO week), such as events_{yyyy}_{mm}", "bucket family: %s", err.Error())
		return b
	}
	sample := f.Name(time.Date(2025, time.July, 9, 0, 0, 0, 0, time.UTC))
	if msg, why := collectionNameProblem(sample); msg != "" {
		p.errorf(k, "use a pattern whose names are collection names"+why, "bucket family %s names collections such as %s: %s", quoteName(pattern), quoteName(sample), msg)
	}
	return b
}

func (p *parser) bucketCount(v *yaml.Node, key string, lo, hi int) *int {
	var n int
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || v.Decode(&n) != nil || n < lo || n > hi {
		p.errorf(v, fmt.Sprintf("write a whole number from %d to %d", lo, hi), "invalid %s %s", key, kindName(v))
		return nil
	}
	return &n
}

// validationSetting reads a validationLevel or validationAction.
func (p *parser) validationSetting(v *yaml.Node, key string, allowed []string) string {
	hint := "write " + orList(allowed)
	s, ok := p.str(v, hint)
	if ok && !contains(allowed, s) {
		p.errorf(v, hint, "invalid %s %q", key, s)
	}
	return s
}

func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
