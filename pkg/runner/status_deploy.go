package runner

// Where a deploy stands, per collection: the backfill as its checkpoint
// records it (internal/state owns the checkpoint; this file only reads
// it), what the next `up` will do, and the documents that should not be
// there (anomalies). Status reads; nothing here writes.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// BackfillStatus is a collection's backfill as its checkpoint records it.
type BackfillStatus struct {
	// Target is the document version the backfill upgrades to.
	Target int64 `json:"target"`
	// Upgraded counts the documents it upgraded, in every run (done).
	Upgraded int64 `json:"upgraded"`
	// Remaining counts the documents below the collection's current
	// version (with StatusOptions.Counts only; nil otherwise).
	Remaining *int64 `json:"remaining,omitempty"`
	// RatePerSecond is the last run's rate (0: unknown, the checkpoint
	// predates run times or the run upgraded nothing).
	RatePerSecond float64 `json:"ratePerSecond,omitempty"`
	// LastRun is when the last run saved the checkpoint.
	LastRun *time.Time `json:"lastRun,omitempty"`
	// Done: the last walk reached the end of the collection.
	Done bool `json:"done"`
	// Resumable: a walk stopped half-way (--max-time, a signal, a crash)
	// and the next backfill continues from its checkpoint.
	Resumable bool `json:"resumable"`
	// Proven: a complete walk found no document below Target, at
	// Generation (the window's reopenings); ProvenAt is when.
	Proven     bool       `json:"proven"`
	ProvenAt   *time.Time `json:"provenAt,omitempty"`
	Generation int64      `json:"generation"`
}

// Anomaly kinds.
const (
	// AnomalyAboveCurrent: documents above the version the applied
	// migrations give (a release newer than them wrote them).
	AnomalyAboveCurrent = "above-current"
	// AnomalyBelowClosed: documents below the current version although
	// the window was closed (a release older than the applied migrations
	// still writes).
	AnomalyBelowClosed = "below-after-close"
	// AnomalyUnknownVersion: documents at a version no migration file
	// gives the collection, or whose version field is not a version.
	AnomalyUnknownVersion = "unknown-version"
)

// Anomaly is documents of a collection that should not be there.
type Anomaly struct {
	Kind string `json:"kind"`
	// Count is how many (with StatusOptions.Counts; 0 when a query with
	// limit 1 found one).
	Count int64 `json:"count,omitempty"`
	// Versions are the versions found (unknown-version, with counts).
	Versions []string `json:"versions,omitempty"`
	Message  string   `json:"message"`
}

// deployStatus adds to st what a deploy needs to see: per collection the
// backfill, the next up, the effective level and action, the anomalies
// and the server's differences from the files; and the marks.
func (r *Runner) deployStatus(ctx context.Context, st *Status, opts StatusOptions) error {
	top := maxApplied(st.applied)
	for i := range st.Collections {
		cs := &st.Collections[i]
		r.effectiveOf(cs, st.applied)
		if err := r.backfillOf(ctx, cs); err != nil {
			return err
		}
		cs.NextUp = r.nextUp(st, cs, top)
		if r.registry.Current(cs.Name) == 0 {
			continue // its documents carry no version
		}
		if cs.Documents != nil {
			r.countedAnomalies(cs)
		} else if opts.Check {
			if err := r.queriedAnomalies(ctx, cs); err != nil {
				return err
			}
		}
	}
	if err := r.serverDrift(ctx, st); err != nil {
		return err
	}
	return r.marksOf(ctx, st)
}

// backfillOf sets cs.Backfill from the collection's checkpoint (nil: no
// backfill ever ran, or its documents carry no version).
func (r *Runner) backfillOf(ctx context.Context, cs *CollectionStatus) error {
	if r.registry.Current(cs.Name) == 0 {
		return nil
	}
	cp, err := r.readCheckpoint(ctx, cs.Name)
	if err != nil || cp == nil {
		return err
	}
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
	if !cp.RangesCounted {
		// A parallel backfill: its ranges count apart until it finishes.
		n, err := r.state.RangesUpgraded(ctx, cs.Name, cp.Target)
		if err != nil {
			return err
		}
		b.Upgraded += n
		if plan, err := r.state.Plan(ctx, cs.Name, cp.Target); err != nil {
			return err
		} else if plan != nil && !cp.Done {
			b.Resumable = true
		}
	}
	if cs.Documents != nil {
		var n int64
		for _, d := range cs.Documents {
			if d.Invalid != "" || d.Version < cs.CurrentVersion {
				n += d.Count
			}
		}
		b.Remaining = &n
	}
	cs.Backfill = b
	return nil
}

// nextUp says what the next `up` does to cs.
func (r *Runner) nextUp(st *Status, cs *CollectionStatus, top int64) string {
	var pending []string
	for _, m := range st.Migrations {
		if mm := r.migrationByVersion(m.Version); m.State == StatePending && mm != nil && mm.Collection(cs.Name) != nil {
			pending = append(pending, fmt.Sprintf("%04d", m.Version))
		}
	}
	cv := r.docVersionAt(cs.Name, top)
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

// countedAnomalies sets cs's anomalies from its per-version counts.
func (r *Runner) countedAnomalies(cs *CollectionStatus) {
	known := r.registry.Versions(cs.Name)
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
	r.addAnomalies(cs, cs.AboveCurrent, below, unknown, unknownVersions)
}

// queriedAnomalies looks for each kind of anomaly with a query, limit 1.
func (r *Runner) queriedAnomalies(ctx context.Context, cs *CollectionStatus) error {
	one := func(filter bson.D, what string) (int64, error) {
		err := r.db.Collection(cs.Name).FindOne(ctx, filter, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
		switch {
		case err == nil:
			return 1, nil
		case errors.Is(err, mongo.ErrNoDocuments):
			return 0, nil
		}
		return 0, fmt.Errorf("look for %s documents %s: %w", cs.Name, what, err)
	}
	var below int64
	if cs.Window == "closed" {
		var err error
		if below, err = one(r.registry.VersionBelow(cs.CurrentVersion), fmt.Sprintf("below version %d", cs.CurrentVersion)); err != nil {
			return err
		}
	}
	// Not at a known version up to the current one, nor above it.
	nor := bson.A{r.registry.VersionAtLeast(cs.CurrentVersion + 1)}
	for _, v := range r.registry.Versions(cs.Name) {
		if v <= cs.CurrentVersion {
			nor = append(nor, r.registry.VersionIs(v))
		}
	}
	unknown, err := one(bson.D{{Key: "$nor", Value: nor}}, "at a version no file knows")
	if err != nil {
		return err
	}
	r.addAnomalies(cs, cs.AboveCurrent, below, unknown, nil)
	return nil
}

func (r *Runner) addAnomalies(cs *CollectionStatus, above, below, unknown int64, unknownVersions []string) {
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
