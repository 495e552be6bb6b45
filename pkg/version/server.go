package version

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// ServerUpdate is a server-side update with the effect of (part of) a
// declarative step: run Update on the document, with Guard (if any) added
// to the filter.
type ServerUpdate struct {
	Guard  bson.D `json:"guard,omitempty"`
	Update bson.D `json:"update"`
}

// ServerUpdates translates a declarative step into MongoDB update
// operators with the same effect, to run in order: set is one $set, unset
// one $unset, rename one $rename, default one $set per field guarded by
// {path: {$exists: false}}, in MongoDB's field order. ok is false for
// steps no update operator expresses (copy, func), which must run in Go.
func ServerUpdates(s migration.Step) (updates []ServerUpdate, ok bool) {
	c, err := compileStep(s, nil)
	if err != nil {
		return nil, false
	}
	doc := func(value func(f field) any) bson.D {
		d := make(bson.D, 0, len(c.fields))
		for _, f := range c.fields {
			d = append(d, bson.E{Key: f.path, Value: value(f)})
		}
		return d
	}
	switch s.Op {
	case migration.OpSet:
		return []ServerUpdate{{Update: bson.D{{Key: "$set", Value: doc(func(f field) any { return f.value })}}}}, true
	case migration.OpUnset:
		return []ServerUpdate{{Update: bson.D{{Key: "$unset", Value: doc(func(field) any { return "" })}}}}, true
	case migration.OpRename:
		return []ServerUpdate{{Update: bson.D{{Key: "$rename", Value: doc(func(f field) any { return f.to })}}}}, true
	case migration.OpDefault:
		for _, f := range c.fields {
			updates = append(updates, ServerUpdate{
				Guard:  bson.D{{Key: f.path, Value: bson.D{{Key: "$exists", Value: false}}}},
				Update: bson.D{{Key: "$set", Value: bson.D{{Key: f.path, Value: f.value}}}},
			})
		}
		return updates, true
	}
	return nil, false
}
