package migration

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/buckets"
)

// DefaultBucketsAhead is how many periods ahead members are created when
// no declaration of the family says.
const DefaultBucketsAhead = 1

// FamilyState is what the migrations applied declare for one family:
// the first declaration's period, the last ahead and keep, validator,
// level and action, and the indexes created and not dropped since.
type FamilyState struct {
	Pattern string
	Family  buckets.Family
	Ahead   int
	// Keep is how many periods are kept, the current one included (0:
	// members are never dropped).
	Keep      int
	Validator bson.D
	// From is the migration that last declared the validator (0: none).
	From   int64
	Level  Level
	Action Action
	// Indexes are the indexes every member has (name -> spec), IndexFrom
	// the migration that created each, Dropped the indexes dropped since
	// (name -> the migration that dropped it).
	Indexes   map[string]Index
	IndexFrom map[string]int64
	Dropped   map[string]int64
	// DeclaredBy is the first migration that declares the family.
	DeclaredBy int64
}

// Families folds the families the migrations of ms for which applied is
// true declare (ms in version order), in the order first declared. A
// family whose pattern and period do not make a family (lint's error) is
// left out.
func Families(ms []*Migration, applied func(version int64) bool) []FamilyState {
	var out []FamilyState
	index := map[string]int{}
	for _, m := range ms {
		if !applied(m.Version) {
			continue
		}
		for _, b := range m.Buckets {
			i, ok := index[b.Pattern]
			if !ok {
				f, err := b.Family()
				if err != nil {
					continue
				}
				out = append(out, FamilyState{Pattern: b.Pattern, Family: f, Ahead: DefaultBucketsAhead, DeclaredBy: m.Version,
					Indexes: map[string]Index{}, IndexFrom: map[string]int64{}, Dropped: map[string]int64{}})
				i = len(out) - 1
				index[b.Pattern] = i
			}
			out[i].fold(m.Version, b)
		}
	}
	return out
}

func (s *FamilyState) fold(v int64, b *BucketFamily) {
	if b.Ahead != nil {
		s.Ahead = *b.Ahead
	}
	if b.Keep != nil {
		s.Keep = *b.Keep
	}
	if b.Validator != nil {
		s.Validator, s.From = b.Validator, v
	}
	if b.ValidationLevel != "" {
		s.Level = b.ValidationLevel
	}
	if b.ValidationAction != "" {
		s.Action = b.ValidationAction
	}
	for _, x := range b.Indexes.Drop {
		delete(s.Indexes, x.Name)
		delete(s.IndexFrom, x.Name)
		s.Dropped[x.Name] = v
	}
	for _, idx := range b.Indexes.Create {
		s.Indexes[idx.Name], s.IndexFrom[idx.Name] = idx, v
		delete(s.Dropped, idx.Name)
	}
}

// IsMember reports whether name is a member of one of the families.
func IsMember(fs []FamilyState, name string) bool {
	for _, f := range fs {
		if _, err := f.Family.Parse(name); err == nil {
			return true
		}
	}
	return false
}

// bucketsChecksum is what SchemaChecksum covers of m's families (nil
// when it declares none, so the checksum of a file without them is what
// it always was).
func bucketsChecksum(m *Migration) bson.A {
	if len(m.Buckets) == 0 {
		return nil
	}
	var out bson.A
	for _, b := range m.Buckets {
		var creates bson.A
		for _, idx := range b.Indexes.Create {
			creates = append(creates, idx.Spec())
		}
		var drops bson.A
		for _, d := range b.Indexes.Drop {
			drops = append(drops, d.Name)
		}
		out = append(out, bson.D{
			{Key: "pattern", Value: b.Pattern}, {Key: "period", Value: string(b.Period)},
			{Key: "ahead", Value: b.Ahead}, {Key: "keep", Value: b.Keep},
			{Key: "validator", Value: b.Validator}, {Key: "validationLevel", Value: string(b.ValidationLevel)},
			{Key: "validationAction", Value: string(b.ValidationAction)}, {Key: "create", Value: creates}, {Key: "drop", Value: drops},
		})
	}
	return out
}
