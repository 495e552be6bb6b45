package lifecycle

// Time-bucketed families (the buckets: key of the files, pkg/buckets for
// the names): which members a family's declaration wants as of a time.
// Only a collection whose name the family's pattern produces is a member
// (pkg/buckets' Parse), so no other collection is ever dropped; a member
// is dropped only when its period started before the Keep periods that
// end with the current one.

import (
	"maps"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/serverstate"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// FamilyMembers is one declared family and its members.
type FamilyMembers struct {
	Pattern string `json:"pattern"`
	Period  string `json:"period"`
	Ahead   int    `json:"ahead"`
	Keep    int    `json:"keep"`
	// Members are the members that exist (before the run), oldest first.
	Members []string `json:"members"`
	// Create and Drop are the members the run creates and drops.
	Create []string `json:"create,omitempty"`
	Drop   []string `json:"drop,omitempty"`
}

// Family is f's members among names (the collections the server holds)
// and those a run as of at creates (the current period to Ahead periods
// ahead, in order) and drops (oldest first).
func Family(f migration.FamilyState, names []string, at time.Time) FamilyMembers {
	fm := FamilyMembers{Pattern: f.Pattern, Period: string(f.Family.Period), Ahead: f.Ahead, Keep: f.Keep, Members: []string{}}
	starts := map[string]time.Time{}
	for _, name := range names {
		if s, err := f.Family.Parse(name); err == nil {
			starts[name] = s
		}
	}
	fm.Members = slices.SortedFunc(maps.Keys(starts), func(a, b string) int { return starts[a].Compare(starts[b]) })
	oldest := f.Family.Add(at, -(f.Keep - 1)) // the first period kept
	for _, name := range fm.Members {
		if f.Keep > 0 && starts[name].Before(oldest) {
			fm.Drop = append(fm.Drop, name)
		}
	}
	for i := 0; i <= f.Ahead; i++ {
		name := f.Family.Name(f.Family.Add(at, i))
		if _, ok := starts[name]; ok {
			continue
		}
		fm.Create = append(fm.Create, name)
	}
	return fm
}

// Kept are fm's members the run keeps (they are brought to the declared
// validator and indexes), oldest first.
func (fm FamilyMembers) Kept() []string {
	var out []string
	for _, name := range fm.Members {
		if !slices.Contains(fm.Drop, name) {
			out = append(out, name)
		}
	}
	return out
}

// FamilyDeclared is what f declares of each member (Name left to fill),
// with validator the one members get (nil: none, so neither level nor
// action).
func FamilyDeclared(f migration.FamilyState, validator bson.D) serverstate.Declared {
	d := serverstate.Declared{Validator: validator, From: f.From, Level: string(f.Level), Action: string(f.Action),
		Indexes: f.Indexes, IndexFrom: f.IndexFrom, Dropped: f.Dropped}
	if validator == nil {
		d.Level, d.Action = "", ""
	}
	return d
}

// LevelOf and ActionOf are the settings sent with a validator (none
// without one: they would mean nothing).
func LevelOf(v bson.D, l migration.Level) migration.Level {
	if v == nil {
		return ""
	}
	return l
}

// ActionOf: see [LevelOf].
func ActionOf(v bson.D, a migration.Action) migration.Action {
	if v == nil {
		return ""
	}
	return a
}

// FamilyValidator is the validator f's members get on a server of caps:
// the family's, or none (clientSide true) when the server does not
// enforce it.
func FamilyValidator(f migration.FamilyState, caps *probe.Capabilities) (validator bson.D, clientSide bool) {
	if !caps.Validators.Available || len(probe.RefusedKeywords(f.Validator, &caps.Keywords)) > 0 {
		return nil, true
	}
	return f.Validator, false
}
