package bsonx

import (
	"go.mongodb.org/mongo-driver/v2/bson"
)

// A walk in _id order resumes after the last _id it wrote. {_id: {$gt: x}}
// alone does not say that: MongoDB compares values of one type class only
// (type bracketing), so after a string it matches strings, and the
// ObjectIds, dates, ... that follow every string in _id order would be
// skipped. AfterID and UpToID add the _ids of every later (earlier) type
// class, in MongoDB's order of type classes: canonicalizeBSONType in
// src/mongo/bson/bsontypes.h. FerretDB v1 refuses the $type codes of the
// types it does not store (MinKey, undefined, decimal, symbol, dbPointer,
// javascript, javascriptWithScope, MaxKey): on it they are left out.

// idClasses are the type classes in _id order, each with its $type codes.
var idClasses = []struct {
	rank  int
	codes bson.A // $type numbers
}{
	{-1, bson.A{-1}},            // MinKey
	{0, bson.A{6}},              // undefined
	{5, bson.A{10}},             // null
	{10, bson.A{1, 16, 18, 19}}, // double, int, long, decimal
	{15, bson.A{2, 14}},         // string, symbol
	{20, bson.A{3}},             // object
	{25, bson.A{4}},             // array
	{30, bson.A{5}},             // binData
	{35, bson.A{7}},             // objectId
	{40, bson.A{8}},             // bool
	{45, bson.A{9}},             // date
	{47, bson.A{17}},            // timestamp
	{50, bson.A{11}},            // regex
	{55, bson.A{12}},            // dbPointer
	{60, bson.A{13}},            // javascript
	{65, bson.A{15}},            // javascriptWithScope
	{127, bson.A{127}},          // MaxKey
}

// typeRank maps a BSON element type to its class's rank.
var typeRank = map[bson.Type]int{
	bson.TypeMinKey: -1, bson.TypeUndefined: 0, bson.TypeNull: 5,
	bson.TypeDouble: 10, bson.TypeInt32: 10, bson.TypeInt64: 10, bson.TypeDecimal128: 10,
	bson.TypeString: 15, bson.TypeSymbol: 15, bson.TypeEmbeddedDocument: 20, bson.TypeArray: 25,
	bson.TypeBinary: 30, bson.TypeObjectID: 35, bson.TypeBoolean: 40, bson.TypeDateTime: 45,
	bson.TypeTimestamp: 47, bson.TypeRegex: 50, bson.TypeDBPointer: 55, bson.TypeJavaScript: 60,
	bson.TypeCodeWithScope: 65, bson.TypeMaxKey: 127,
}

// notOnFerretDB are the $type codes FerretDB v1 refuses.
var notOnFerretDB = map[int]bool{-1: true, 6: true, 19: true, 14: true, 12: true, 13: true, 15: true, 127: true}

// AfterID matches the _ids after id in _id order (ferretDB: the server is
// FerretDB v1).
func AfterID(id any, ferretDB bool) bson.D { return idsBeyond(id, "$gt", true, ferretDB) }

// UpToID matches the _ids up to id, included, in _id order.
func UpToID(id any, ferretDB bool) bson.D { return idsBeyond(id, "$lte", false, ferretDB) }

func idsBeyond(id any, op string, later, ferretDB bool) bson.D {
	cmp := bson.D{{Key: "_id", Value: bson.D{{Key: op, Value: id}}}}
	raw, err := bson.Marshal(bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return cmp
	}
	rank, ok := typeRank[bson.Raw(raw).Lookup("_id").Type]
	if !ok {
		return cmp
	}
	codes := bson.A{}
	for _, c := range idClasses {
		if (later && c.rank > rank) || (!later && c.rank < rank) {
			for _, code := range c.codes {
				if !ferretDB || !notOnFerretDB[code.(int)] {
					codes = append(codes, code)
				}
			}
		}
	}
	if len(codes) == 0 {
		return cmp
	}
	return bson.D{{Key: "$or", Value: bson.A{cmp, bson.D{{Key: "_id", Value: bson.D{{Key: "$type", Value: codes}}}}}}}
}
