package lifecycle

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// ViewStep is what a declared view needs: Name is the command ("drop",
// "create" or "collMod"), Fields its fields after the view's name (none
// for a drop), Features what it needs and Refused why it cannot be sent.
type ViewStep struct {
	Name     string
	Fields   bson.D
	Features []string
	Refused  string
}

// View is v's step: dropped, created, or changed in place when it exists
// (exists: on the server or created by an earlier migration). onServer:
// the server has v's name, of listCollections' type serverType.
func View(v *migration.View, exists, onServer bool, serverType string) ViewStep {
	if v.Drop {
		st := ViewStep{Name: "drop", Features: []string{probe.FeatureViews}}
		if onServer && serverType != "view" {
			st.Refused = fmt.Sprintf("%s is a %s, not a view: mongomig drops views only (a collection's data would go with it)", v.Name, serverType)
		}
		return st
	}
	pipeline := v.Pipeline
	if pipeline == nil {
		pipeline = bson.A{}
	}
	st := ViewStep{Name: "create", Fields: bson.D{{Key: "viewOn", Value: v.ViewOn}, {Key: "pipeline", Value: pipeline}}, Features: []string{probe.FeatureViews}}
	if exists {
		st.Name, st.Features = "collMod", []string{probe.FeatureViewsModify}
	}
	if onServer && serverType != "view" {
		st.Refused = fmt.Sprintf("%s is a %s on the server, not a view", v.Name, serverType)
	}
	return st
}

// IndexChange is the features an in-place index change ch needs, and why
// it cannot be made to what the server holds: found, the index exists;
// expire, its TTL (nil: not a TTL index).
func IndexChange(coll string, ch migration.IndexChange, found bool, expire *int64) (features []string, refused string) {
	if ch.ExpireAfterSeconds != nil {
		features = append(features, probe.FeatureTTLModify)
	}
	if ch.Hidden != nil {
		features = append(features, probe.FeatureHiddenModify)
	}
	switch {
	case !found:
		refused = fmt.Sprintf("%s has no index %s to change", coll, ch.Name)
	case ch.ExpireAfterSeconds != nil && expire == nil:
		refused = fmt.Sprintf("index %s is not a TTL index, and collMod cannot make it one (src/mongo/db/catalog/coll_mod.cpp: \"no expireAfterSeconds field to update\"): declare it under indexes.rebuild with expireAfterSeconds", ch.Name)
	}
	return features, refused
}

// RebuildCost is the plan's cost of rebuilding idx over n documents.
func RebuildCost(idx migration.Index, n int64) string {
	return fmt.Sprintf("rebuild: drops %s and builds it again over %s; queries that used it go without it until the build ends", idx.Name, Documents(n))
}
