package runner

import (
	"errors"
	"fmt"
	"sort"

	"github.com/mongomig/mongomig/pkg/version"
)

// aggregate folds document results into bounded totals: memory does not
// grow with the number of documents.
type aggregate struct {
	versions   map[int64]int64
	invalid    map[string]int64
	failing    int64
	rawFailing int64
	groups     map[[2]string]*FailureGroup
	upgrades   map[string]*FailureGroup
	scanned    int64
	// limit is how many example ids a group keeps; 0 keeps all.
	limit int
}

func newAggregate(allIDs bool) *aggregate {
	a := &aggregate{versions: map[int64]int64{}, invalid: map[string]int64{}, groups: map[[2]string]*FailureGroup{}, upgrades: map[string]*FailureGroup{}, limit: MaxExampleIDs}
	if allIDs {
		a.limit = 0
	}
	return a
}

func (a *aggregate) add(res docResult) {
	a.scanned++
	switch {
	case res.invalid != "":
		a.invalid[res.invalid]++
	default:
		a.versions[res.version]++
	}
	if res.rawFails {
		a.rawFailing++
	}
	if res.upgrade != nil {
		a.failing++
		msg := upgradeMessage(res.upgrade)
		g := a.upgrades[msg]
		if g == nil {
			g = &FailureGroup{Rule: "upgrade", Message: msg}
			a.upgrades[msg] = g
		}
		g.addLimited(res.id, a.limit)
		return
	}
	if len(res.failures) == 0 {
		return
	}
	a.failing++
	for _, f := range res.failures {
		key := [2]string{f.Path, f.Rule}
		g := a.groups[key]
		if g == nil {
			g = &FailureGroup{Path: f.Path, Rule: f.Rule, Message: f.Message}
			a.groups[key] = g
		}
		g.addLimited(res.id, a.limit)
	}
}

// upgradeMessage words an upgrade failure without the document's _id, so
// documents failing the same way share one group.
func upgradeMessage(err error) string {
	return upgradeMessageWith(err, func(found string) string { return found })
}

// upgradeMessageWith is upgradeMessage with each value found in the
// document (a version or marker field's) shown as value(found).
func upgradeMessageWith(err error, value func(found string) string) string {
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

// add counts a document and keeps the smallest MaxExampleIDs ids (results
// arrive out of order from the workers; sorting keeps reports stable).
func (g *FailureGroup) add(id string) { g.addLimited(id, MaxExampleIDs) }

// addLimited is add keeping limit ids (0: all).
func (g *FailureGroup) addLimited(id string, limit int) {
	g.Count++
	g.ExampleIDs = append(g.ExampleIDs, id)
	if limit > 0 && len(g.ExampleIDs) > 4*limit {
		g.trimTo(limit)
	}
}

func (g *FailureGroup) trim() { g.trimTo(MaxExampleIDs) }

func (g *FailureGroup) trimTo(limit int) {
	sort.Slice(g.ExampleIDs, func(i, j int) bool { return idLess(g.ExampleIDs[i], g.ExampleIDs[j]) })
	if limit > 0 && len(g.ExampleIDs) > limit {
		g.ExampleIDs = g.ExampleIDs[:limit]
	}
}

func (a *aggregate) fill(cr *CollectionReport) {
	cr.Scanned, cr.Failing = a.scanned, a.failing
	for v, n := range a.versions {
		cr.Versions = append(cr.Versions, VersionCount{Version: v, Count: n})
	}
	for s, n := range a.invalid {
		cr.Versions = append(cr.Versions, VersionCount{Invalid: ExtJSON(s), Count: n})
	}
	sort.Slice(cr.Versions, func(i, j int) bool {
		if cr.Versions[i].Invalid != cr.Versions[j].Invalid {
			return cr.Versions[i].Invalid < cr.Versions[j].Invalid
		}
		return cr.Versions[i].Version < cr.Versions[j].Version
	})
	for _, g := range a.groups {
		g.trimTo(a.limit)
		cr.Groups = append(cr.Groups, *g)
	}
	sort.Slice(cr.Groups, func(i, j int) bool {
		if cr.Groups[i].Count != cr.Groups[j].Count {
			return cr.Groups[i].Count > cr.Groups[j].Count
		}
		if cr.Groups[i].Path != cr.Groups[j].Path {
			return cr.Groups[i].Path < cr.Groups[j].Path
		}
		return cr.Groups[i].Rule < cr.Groups[j].Rule
	})
	for _, g := range a.upgrades {
		g.trimTo(a.limit)
		cr.UpgradeErrors = append(cr.UpgradeErrors, *g)
	}
	sort.Slice(cr.UpgradeErrors, func(i, j int) bool { return cr.UpgradeErrors[i].Message < cr.UpgradeErrors[j].Message })
}
