package statusview

// The rules status applies to what it counted or must query of a
// collection's documents: what a backfill still has to upgrade, and the
// filters that find one anomalous document when nothing was counted.

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/version"
)

// Remaining is how many documents of cs a backfill still has to upgrade
// (not a version, or below the current one), from its per-version counts;
// nil when cs was not counted.
func Remaining(cs *CollectionStatus) *int64 {
	if cs.Documents == nil {
		return nil
	}
	var n int64
	for _, d := range cs.Documents {
		if d.Invalid != "" || d.Version < cs.CurrentVersion {
			n += d.Count
		}
	}
	return &n
}

// AnomalyFilters are the queries that find a document of cs that should
// not be there when cs was not counted: below, one under the current
// version though the window is closed (nil: the window is not closed), and
// unknown, one at no version up to the current one the files know, nor
// above it.
func AnomalyFilters(reg *version.Registry, cs *CollectionStatus) (below, unknown bson.D) {
	if cs.Window == "closed" {
		below = reg.VersionBelow(cs.CurrentVersion)
	}
	nor := bson.A{reg.VersionAtLeast(cs.CurrentVersion + 1)}
	for _, v := range reg.Versions(cs.Name) {
		if v <= cs.CurrentVersion {
			nor = append(nor, reg.VersionIs(v))
		}
	}
	return below, bson.D{{Key: "$nor", Value: nor}}
}
