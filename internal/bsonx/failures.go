package bsonx

import (
	"errors"
	"fmt"
	"sort"

	"github.com/mongomig/mongomig/pkg/version"
)

// MaxExampleIDs is how many _ids a failure group keeps.
const MaxExampleIDs = 5

// FailureGroup is every document failing one rule at one path.
type FailureGroup struct {
	Path    string `json:"path"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
	Count   int64  `json:"count"`
	// ExampleIDs are up to MaxExampleIDs _ids (all of them when a report
	// asks for every one), the smallest in _id order, as relaxed Extended
	// JSON; JSON output carries them as values ([ExtJSON]).
	ExampleIDs []string `json:"exampleIds"`
}

// Add counts a document and keeps the smallest MaxExampleIDs ids (results
// arrive out of order from workers; sorting keeps reports stable).
func (g *FailureGroup) Add(id string) { g.AddLimited(id, MaxExampleIDs) }

// AddLimited is Add keeping limit ids (0: all).
func (g *FailureGroup) AddLimited(id string, limit int) {
	g.Count++
	g.ExampleIDs = append(g.ExampleIDs, id)
	if limit > 0 && len(g.ExampleIDs) > 4*limit {
		g.TrimTo(limit)
	}
}

// Trim keeps the smallest MaxExampleIDs ids.
func (g *FailureGroup) Trim() { g.TrimTo(MaxExampleIDs) }

// TrimTo sorts the ids in _id order and keeps the smallest limit (0: all).
func (g *FailureGroup) TrimTo(limit int) {
	sort.Slice(g.ExampleIDs, func(i, j int) bool { return IDLess(g.ExampleIDs[i], g.ExampleIDs[j]) })
	if limit > 0 && len(g.ExampleIDs) > limit {
		g.ExampleIDs = g.ExampleIDs[:limit]
	}
}

// FailureList is failed's groups, trimmed, in the order of their messages.
func FailureList(failed map[string]*FailureGroup) []FailureGroup {
	var out []FailureGroup
	for _, g := range failed {
		g.Trim()
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Message < out[j].Message })
	return out
}

// UpgradeMessage words an upgrade failure without the document's _id, so
// documents failing the same way share one group.
func UpgradeMessage(err error) string {
	return UpgradeMessageWith(err, func(found string) string { return found })
}

// UpgradeMessageWith is UpgradeMessage with each value found in the
// document (a version or marker field's) shown as value(found).
func UpgradeMessageWith(err error, value func(found string) string) string {
	var ue *version.UpgradeError
	var tn *version.TooNewError
	var ve *version.VersionError
	var me *version.MarkerError
	switch {
	case errors.As(err, &ue):
		return fmt.Sprintf("%s step %d (%s): %v", ue.File, ue.Step, ue.Op, ue.Err)
	case errors.As(err, &tn):
		return fmt.Sprintf("at version %d, newer than the %d these migration files know: check with the newer files", tn.Version, tn.Current)
	case errors.As(err, &ve) && ve.Count > 1:
		return fmt.Sprintf("field %q appears %d times: replace the document with one that has a single %q", ve.Field, ve.Count, ve.Field)
	case errors.As(err, &ve):
		return fmt.Sprintf("field %q holds %s, not a version number (a non-negative whole number: an int32, an int64, or a double without a fraction below 2^53): fix the document (a missing or null field means version 0)", ve.Field, value(ve.Found))
	case errors.As(err, &me):
		return fmt.Sprintf("%s = %s %s", version.MarkerField, value(me.Found), me.Reason)
	}
	return err.Error()
}
