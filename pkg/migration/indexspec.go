package migration

import "go.mongodb.org/mongo-driver/v2/bson"

// Spec is idx as one entry of a createIndexes command's indexes: key and
// name, then the options it sets, in a fixed order. pkg/runner sends it
// (and [SchemaChecksum] covers it); pkg/inspect shows the existing
// indexes in this form.
func (idx Index) Spec() bson.D {
	spec := bson.D{{Key: "key", Value: idx.Keys}, {Key: "name", Value: idx.Name}}
	if idx.Unique {
		spec = append(spec, bson.E{Key: "unique", Value: true})
	}
	if idx.Sparse {
		spec = append(spec, bson.E{Key: "sparse", Value: true})
	}
	if idx.Hidden {
		spec = append(spec, bson.E{Key: "hidden", Value: true})
	}
	if idx.ExpireAfterSeconds != nil {
		spec = append(spec, bson.E{Key: "expireAfterSeconds", Value: *idx.ExpireAfterSeconds})
	}
	if idx.PartialFilterExpression != nil {
		spec = append(spec, bson.E{Key: "partialFilterExpression", Value: idx.PartialFilterExpression})
	}
	if idx.Collation != nil {
		spec = append(spec, bson.E{Key: "collation", Value: idx.Collation})
	}
	return spec
}
