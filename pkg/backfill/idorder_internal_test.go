package backfill

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestIDOrderFilters pins the resume filters: the _ids after (up to) one,
// in MongoDB's order of type classes (canonicalizeBSONType in
// src/mongo/bson/bsontypes.h), with the $type codes FerretDB v1 refuses
// left out on it.
func TestIDOrderFilters(t *testing.T) {
	oid := bson.NewObjectID()
	for _, tc := range []struct {
		f    bson.D
		want string
	}{
		{afterID("x", false), `{"$or":[{"_id":{"$gt":"x"}},{"_id":{"$type":[3,4,5,7,8,9,17,11,12,13,15,127]}}]}`},
		{afterID("x", true), `{"$or":[{"_id":{"$gt":"x"}},{"_id":{"$type":[3,4,5,7,8,9,17,11]}}]}`},
		{upToID(oid, false), fmt.Sprintf(`{"$or":[{"_id":{"$lte":{"$oid":"%s"}}},{"_id":{"$type":[-1,6,10,1,16,18,19,2,14,3,4,5]}}]}`, oid.Hex())},
		{upToID(oid, true), fmt.Sprintf(`{"$or":[{"_id":{"$lte":{"$oid":"%s"}}},{"_id":{"$type":[10,1,16,18,2,3,4,5]}}]}`, oid.Hex())},
		{afterID(int32(3), true), `{"$or":[{"_id":{"$gt":3}},{"_id":{"$type":[2,3,4,5,7,8,9,17,11]}}]}`},
		{afterID(bson.MaxKey{}, false), `{"_id":{"$gt":{"$maxKey":1}}}`},
	} {
		b, err := bson.MarshalExtJSON(tc.f, false, false)
		if got := string(b); err != nil || got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// TestIDOrderFiltersOfRawValues: the server-side path's _ids are raw
// values; their type is read the same way.
func TestIDOrderFiltersOfRawValues(t *testing.T) {
	raw, err := bson.Marshal(bson.D{{Key: "_id", Value: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bson.MarshalExtJSON(afterID(bson.Raw(raw).Lookup("_id"), true), false, false)
	if want := `{"$or":[{"_id":{"$gt":"x"}},{"_id":{"$type":[3,4,5,7,8,9,17,11]}}]}`; err != nil || string(b) != want {
		t.Errorf("got  %s (%v)\nwant %s", b, err, want)
	}
}
