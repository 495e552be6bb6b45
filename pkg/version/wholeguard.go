package version

import (
	"go.mongodb.org/mongo-driver/v2/bson"
)

// ReadsWhole reports whether the upgrade of before, a document of coll as
// read, runs a func step that may read any field (one registered without
// [Fields]): its write-back then guards every field as read (see
// [Registry.DeltaFor]), and [WholeFilter] says the same in one clause.
func (r *Registry) ReadsWhole(coll string, before bson.D) bool {
	ch := r.chains[coll]
	if ch == nil {
		return false
	}
	from, _ := r.VersionOf(coll, before)
	for i := range ch.links {
		if ch.links[i].version > from && ch.links[i].readsAll {
			return true
		}
	}
	return false
}

// WholeFilter is the filter matching the document of _id id only while
// it is exactly asRead (a bson.D or bson.Raw, the whole document as read):
// {_id: id, $expr: {$eq: ["$$ROOT", {$literal: asRead}]}}. It is what the
// per-field guards of a delta that guards every field as read say (each
// field at its value, no field added, the step marker absent if it was),
// in one clause, and exact where they needed care: an aggregation
// expression compares values, it does not traverse arrays as a query's
// equality does (src/mongo/db/matcher/path.cpp, BSONElementIterator: a
// leaf array yields each element, then the array itself, so {f: 1}
// matches f: [1] and {f: [1, 2]} matches f: [[1, 2], 3]), and two
// documents are equal only with the same field names, in the same order,
// with equal values (src/mongo/db/exec/document_value/document.cpp,
// Document::compare; numbers compare by value, as they do for $eq, and
// strings under the collection's collation, as they do for $eq). A
// document whose fields another writer only reordered no longer matches:
// the write is retried from a fresh read, nothing is lost. $literal keeps
// a value such as "$name" or {$kind: 1} from being read as an expression.
func WholeFilter(id, asRead any) bson.D {
	return bson.D{
		{Key: "_id", Value: id},
		{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$$ROOT", bson.D{{Key: "$literal", Value: asRead}}}}}},
	}
}
