package report

import (
	"sort"

	"github.com/mongomig/mongomig/internal/bsonx"
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
		msg := bsonx.UpgradeMessage(res.upgrade)
		g := a.upgrades[msg]
		if g == nil {
			g = &FailureGroup{Rule: "upgrade", Message: msg}
			a.upgrades[msg] = g
		}
		g.AddLimited(res.id, a.limit)
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
		g.AddLimited(res.id, a.limit)
	}
}

func (a *aggregate) fill(cr *Collection) {
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
		g.TrimTo(a.limit)
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
		g.TrimTo(a.limit)
		cr.UpgradeErrors = append(cr.UpgradeErrors, *g)
	}
	sort.Slice(cr.UpgradeErrors, func(i, j int) bool { return cr.UpgradeErrors[i].Message < cr.UpgradeErrors[j].Message })
}
