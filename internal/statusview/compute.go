package statusview

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/ledger"
	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/release"
)

// Declared is collection name's state as the applied migrations of ms
// (those with entries) declare it, before the server is read: the validator
// in force and its enforcement as the ledger records it, the level and
// action, the current document version; target is the version all files
// upgrade to.
func Declared(name string, ms []*migration.Migration, entries map[int64]ledger.Entry, target int64) CollectionStatus {
	cs := CollectionStatus{Name: name, Enforcement: "none", TargetVersion: target}
	for _, m := range ms {
		e, applied := entries[m.Version]
		c := m.Collection(name)
		if !applied || c == nil {
			continue
		}
		if c.Validator != nil {
			cs.ValidatorFrom = m.Version
			cs.Enforcement = "server"
			for _, cso := range e.ClientSideValidators {
				if cso == name {
					cs.Enforcement = "client-side only"
				}
			}
		}
		if c.ValidationLevel != "" {
			cs.Level = string(c.ValidationLevel)
		}
		if c.ValidationAction != "" {
			cs.Action = string(c.ValidationAction)
		}
		if len(c.Upgrade) > 0 {
			cs.CurrentVersion = m.Version
		}
	}
	if cs.ValidatorFrom != 0 {
		// What the server holds: a migration that leaves them out
		// keeps the previous ones, and a new validator gets MongoDB's
		// defaults (as reports say).
		cs.Level = string(bsonx.OrDefault(migration.Level(cs.Level), migration.LevelStrict))
		cs.Action = string(bsonx.OrDefault(migration.Action(cs.Action), migration.ActionError))
	}
	return cs
}

// Backfill is a collection's backfill as its checkpoint cp records it,
// without the ranges of a parallel backfill (the caller adds them).
func Backfill(cp *state.Checkpoint) *BackfillStatus {
	b := &BackfillStatus{Target: cp.Target, Upgraded: cp.Upgraded, Done: cp.Done, Proven: cp.Proven, Generation: cp.Generation}
	if !cp.UpdatedAt.IsZero() {
		at := cp.UpdatedAt
		b.LastRun = &at
	}
	if cp.Proven && !cp.ProvenAt.IsZero() {
		at := cp.ProvenAt
		b.ProvenAt = &at
	}
	if secs := cp.UpdatedAt.Sub(cp.RunStartedAt).Seconds(); !cp.RunStartedAt.IsZero() && secs > 0 && cp.Upgraded > cp.RunFrom {
		b.RatePerSecond = float64(cp.Upgraded-cp.RunFrom) / secs
	}
	b.Resumable = !cp.Done && cp.LastID != nil
	return b
}

// NextUp says what the next `up` does to cs: apply the pending
// migrations (their numbers), or close or leave open its window, whose
// current document version is cv.
func NextUp(cs *CollectionStatus, pending []string, cv int64) string {
	switch {
	case len(pending) > 0:
		return fmt.Sprintf("applies %s to %s", joinAnd(pending), cs.Name)
	case cs.Window != "open":
		return ""
	case cs.Backfill != nil && cs.Backfill.Proven && cs.Backfill.Target == cv:
		return fmt.Sprintf("closes the window of %s (if a fresh query still finds no document below version %d)", cs.Name, cv)
	}
	return fmt.Sprintf("leaves the window of %s open: no backfill proved that no document below version %d remains", cs.Name, cv)
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	out := s[0]
	for _, x := range s[1 : len(s)-1] {
		out += ", " + x
	}
	return out + " and " + s[len(s)-1]
}

// CountedAnomalies sets cs's anomalies from its per-version counts;
// known are the document versions the files give the collection.
func CountedAnomalies(cs *CollectionStatus, known []int64) {
	var below, unknown int64
	var unknownVersions []string
	for _, d := range cs.Documents {
		switch {
		case d.Invalid != "":
			unknown += d.Count
			unknownVersions = append(unknownVersions, string(d.Invalid))
		case d.Version > cs.CurrentVersion:
			// AboveCurrent (set by collectionStatus).
		case !slices.Contains(known, d.Version):
			unknown += d.Count
			unknownVersions = append(unknownVersions, fmt.Sprint(d.Version))
		case d.Version < cs.CurrentVersion && cs.Window == "closed":
			below += d.Count
		}
	}
	AddAnomalies(cs, cs.AboveCurrent, below, unknown, unknownVersions)
}

// AddAnomalies adds to cs the anomalies of above, below and unknown
// documents (counts when cs was counted, else 1 for any found).
func AddAnomalies(cs *CollectionStatus, above, below, unknown int64, unknownVersions []string) {
	counted := cs.Documents != nil
	n := func(c int64) string {
		if !counted {
			return "documents"
		}
		if c == 1 {
			return "1 document"
		}
		return fmt.Sprintf("%d documents", c)
	}
	if above > 0 {
		cs.Anomalies = append(cs.Anomalies, Anomaly{Kind: AnomalyAboveCurrent, Count: countIf(counted, above),
			Message: fmt.Sprintf("%s: %s above version %d, the one the applied migrations give: a release the applied files do not know wrote them, or a backfill ran past a down; a release running these files cannot read them", cs.Name, n(above), cs.CurrentVersion)})
	}
	if below > 0 {
		cs.Anomalies = append(cs.Anomalies, Anomaly{Kind: AnomalyBelowClosed, Count: countIf(counted, below),
			Message: fmt.Sprintf("%s: %s below version %d although the window was closed: a release older than the applied migrations still writes them", cs.Name, n(below), cs.CurrentVersion)})
	}
	if unknown > 0 {
		at := "at a version no migration file gives " + cs.Name
		if len(unknownVersions) > 0 {
			at += " (" + joinAnd(unknownVersions) + ")"
		}
		cs.Anomalies = append(cs.Anomalies, Anomaly{Kind: AnomalyUnknownVersion, Count: countIf(counted, unknown), Versions: unknownVersions,
			Message: fmt.Sprintf("%s: %s %s, or whose version field is not a version: no upgrade chain starts there", cs.Name, n(unknown), at)})
	}
}

func countIf(counted bool, n int64) int64 {
	if counted {
		return n
	}
	return 0
}

// Migrations lists every migration of migrations and every entry of the ledger
// whose file is gone, in version order, each with its state against the
// ledger (pending, applied, drifted, missing); current is the highest
// version applied, latest the highest of the files.
func Migrations(migrations []*migration.Migration, entries map[int64]ledger.Entry) (list []MigrationStatus, current, latest int64) {
	list = []MigrationStatus{}
	files := map[int64]bool{}
	for _, m := range migrations {
		files[m.Version] = true
		ms := MigrationStatus{Version: m.Version, Name: m.Name, File: m.File, State: StatePending, Checksum: m.Checksum}
		if e, ok := entries[m.Version]; ok {
			at := e.AppliedAt
			ms.AppliedAt, ms.AppliedBy, ms.LedgerChecksum = &at, e.AppliedBy.Host, e.Checksum
			ms.State = StateApplied
			if !ledger.SameSchema(e, m) {
				ms.State = StateDrifted
			}
		}
		list = append(list, ms)
		latest = max(latest, m.Version)
	}
	for v, e := range entries {
		if !files[v] {
			at := e.AppliedAt
			list = append(list, MigrationStatus{Version: v, Name: e.Name, File: e.File, State: StateMissing, LedgerChecksum: e.Checksum, AppliedAt: &at, AppliedBy: e.AppliedBy.Host})
		}
		current = max(current, v)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Version < list[j].Version })
	return list, current, latest
}

// Counts counts the pending and the drifted (or missing) migrations of
// list.
func Counts(list []MigrationStatus) (pending, drifted int) {
	for _, m := range list {
		switch m.State {
		case StatePending:
			pending++
		case StateDrifted, StateMissing:
			drifted++
		}
	}
	return pending, drifted
}

// HeldByReleases says in cs.NextUp that the window the next up would close
// stays open while live releases that know only versions below cv (the
// version cs's documents carry) still run.
func HeldByReleases(cs *CollectionStatus, live []release.Release, cv int64) {
	if !strings.HasPrefix(cs.NextUp, "closes the window of ") {
		return
	}
	if behind := release.Behind(live, cs.Name, cv); len(behind) > 0 {
		cs.NextUp = fmt.Sprintf("leaves the window of %s open while %s still running (it closes on an up once they are gone)", cs.Name, release.Names(behind, cs.Name))
	}
}
