package backfill

import (
	"bytes"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/version"
)

// TestPatchRawManyFields: past 64 set fields, those raw holds are still
// written in place, once, and the others appended (see TestPatchRaw).
func TestPatchRawManyFields(t *testing.T) {
	before := bson.D{{Key: "_id", Value: int32(1)}}
	after := bson.D{{Key: "_id", Value: int32(1)}}
	for i := 0; i < 70; i++ {
		before = append(before, bson.E{Key: fmt.Sprint("f", i), Value: int32(i)})
		after = append(after, bson.E{Key: fmt.Sprint("f", i), Value: int64(i)})
	}
	for i := 0; i < 70; i++ {
		after = append(after, bson.E{Key: fmt.Sprint("g", i), Value: int32(i)})
	}
	delta, err := version.DeltaOf(before, after)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := bson.Marshal(before)
	got, err := patchRaw(nil, raw, delta.Update)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := bson.Marshal(after); !bytes.Equal(got, want) {
		gb, _ := bson.MarshalExtJSON(bson.Raw(got), true, false)
		t.Errorf("patched %s", gb)
	}
}
