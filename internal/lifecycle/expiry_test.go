package lifecycle

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// TestExpiryExpires: the TTL monitor expires documents only through a
// single-field TTL index not on _id (src/mongo/db/ttl/ttl.cpp).
func TestExpiryExpires(t *testing.T) {
	ttl := int64(60)
	for _, c := range []struct {
		idx  migration.Index
		want bool
	}{
		{migration.Index{Keys: bson.D{{Key: "at", Value: 1}}, ExpireAfterSeconds: &ttl}, true},
		{migration.Index{Keys: bson.D{{Key: "at", Value: 1}}}, false},
		{migration.Index{Keys: bson.D{{Key: "_id", Value: 1}}, ExpireAfterSeconds: &ttl}, false},
		{migration.Index{Keys: bson.D{{Key: "at", Value: 1}, {Key: "k", Value: 1}}, ExpireAfterSeconds: &ttl}, false},
	} {
		if got := Expires(c.idx); got != c.want {
			t.Errorf("Expires(%v) = %v, want %v", c.idx.Keys, got, c.want)
		}
	}
}

// TestExpiryFilterAndCutoff: the cutoff is to the millisecond; the
// filter keeps the partial filter.
func TestExpiryFilterAndCutoff(t *testing.T) {
	ttl := int64(3600)
	idx := migration.Index{Name: "at_1", Keys: bson.D{{Key: "at", Value: 1}}, ExpireAfterSeconds: &ttl, PartialFilterExpression: bson.D{{Key: "kind", Value: "a"}}}
	now := time.Date(2025, 7, 9, 12, 0, 0, 123456789, time.UTC)
	cutoff := ExpiryCutoff(now, idx)
	if want := time.Date(2025, 7, 9, 11, 0, 0, 123000000, time.UTC); !cutoff.Equal(want) {
		t.Fatalf("cutoff %v, want %v", cutoff, want)
	}
	want := bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: cutoff}}}}, bson.D{{Key: "kind", Value: "a"}}}}}
	if got := ExpiryFilter(idx, cutoff); BSONText(got) != BSONText(want) {
		t.Fatalf("filter %s, want %s", BSONText(got), BSONText(want))
	}
}

func TestExpiryWording(t *testing.T) {
	for n, want := range map[int64]string{1: "1 document", 999: "999 documents", 1000: "1,000 documents", 1234567: "1,234,567 documents", -1000: "-1,000 documents"} {
		if got := Documents(n); got != want {
			t.Errorf("Documents(%d) = %q, want %q", n, got, want)
		}
	}
	if Batches(1) != "1 batch" || Batches(3) != "3 batches" {
		t.Errorf("batches %q %q", Batches(1), Batches(3))
	}
}
