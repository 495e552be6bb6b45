package lifecycle

// The expired backlog of a TTL index (the protocol is internal/expiry's,
// which reads, deletes and keeps the progress): which index
// expires documents, the cutoff and filter that select them, the plan's
// step and its wording.

import (
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// CommandDeleteExpired names the deletion of an expired backlog in a
// plan: not one server command but batches of find and delete.
const CommandDeleteExpired = "deleteExpired"

// Expires reports whether the TTL monitor expires documents through idx:
// a single-field TTL index not on _id (src/mongo/db/ttl/ttl.cpp).
func Expires(idx migration.Index) bool {
	return idx.ExpireAfterSeconds != nil && len(idx.Keys) == 1 && idx.Keys[0].Key != "_id"
}

// ExpiryCutoff is the cutoff a deletion begun at the server's time now
// fixes: now minus idx's expireAfterSeconds, to the millisecond a BSON
// date holds.
func ExpiryCutoff(now time.Time, idx migration.Index) time.Time {
	return now.Add(-time.Duration(*idx.ExpireAfterSeconds) * time.Second).Truncate(time.Millisecond)
}

// ExpiryFilter selects the documents idx expires at cutoff: its field a
// date before it (a $lt on a date matches dates only, and an array by its
// earliest date, as the TTL monitor reads the index), within its partial
// filter.
func ExpiryFilter(idx migration.Index, cutoff time.Time) bson.D {
	f := bson.D{{Key: idx.Keys[0].Key, Value: bson.D{{Key: "$lt", Value: cutoff}}}}
	if idx.PartialFilterExpression != nil {
		f = bson.D{{Key: "$and", Value: bson.A{f, idx.PartialFilterExpression}}}
	}
	return f
}

// ExpiryDoc is the plan's deleteExpired step for coll's documents idx
// expires at cutoff, deleted batch at a time.
func ExpiryDoc(coll string, idx migration.Index, cutoff time.Time, batch int) bson.D {
	return bson.D{{Key: CommandDeleteExpired, Value: coll}, {Key: "index", Value: idx.Name},
		{Key: "filter", Value: ExpiryFilter(idx, cutoff)}, {Key: "batchSize", Value: int32(batch)}}
}

// ExpiryCost is the plan's cost of deleting n expired documents first.
func ExpiryCost(n int64, idx migration.Index, batch int) string {
	return fmt.Sprintf("expiry: %s past %s's expireAfterSeconds (%d) are deleted first, in batches of %d, so that the new TTL does not delete them at once",
		Documents(n), idx.Name, *idx.ExpireAfterSeconds, batch)
}

// Documents words n documents with thousands separators.
func Documents(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n == 1 {
		return s + " document"
	}
	return s + " documents"
}

// Batches words n batches.
func Batches(n int64) string {
	if n == 1 {
		return "1 batch"
	}
	return fmt.Sprintf("%d batches", n)
}
