package runner_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// TestDownPartwayOnlyForTheExactMarker: down refuses as partway only for a
// field in the exact shape a backfill writes ({mongomig: "backfill", from,
// to, step}, numbers; invariant 3 of version.MarkerField). Any other value
// of a field of that name is the application's own, or a marker nothing can
// resume from: the server-side backfill, whose filters name the exact
// marker, never touches it, so a partway refusal that sends the user to
// backfill would refuse forever.
func TestDownPartwayOnlyForTheExactMarker(t *testing.T) {
	ctx := context.Background()
	srv := sandboxtest.Start(t)
	client := sandboxtest.Connect(t, srv.URI())
	marker := func(from, to, step any) bson.D {
		return bson.D{{Key: "mongomig", Value: "backfill"}, {Key: "from", Value: from}, {Key: "to", Value: to}, {Key: "step", Value: step}}
	}
	for i, tc := range []struct {
		name    string
		value   any
		partway bool
	}{
		{"a backfill's marker", marker(int32(0), int32(2), int32(1)), true},
		{"a backfill's marker with long and double numbers", marker(int64(0), 2.0, int64(1)), true},
		{"a string", "mine", false},
		{"a document of the application's", bson.D{{Key: "step", Value: 3}}, false},
		{"the tag alone", bson.D{{Key: "mongomig", Value: "backfill"}}, false},
		{"the tag in an array", bson.D{{Key: "mongomig", Value: bson.A{"backfill"}}, {Key: "from", Value: int32(0)}, {Key: "to", Value: int32(2)}, {Key: "step", Value: int32(1)}}, false},
		{"a marker in an array", bson.A{marker(int32(0), int32(2), int32(1))}, false},
		{"a marker whose step is a string", marker(int32(0), int32(2), "1"), false},
		{"a marker whose from is an array", marker(bson.A{int32(0)}, int32(2), int32(1)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := client.Database(fmt.Sprintf("marker_%d", i))
			r := newRunner(t, db, copyBackFS)
			if _, err := r.Up(ctx); err != nil {
				t.Fatal(err)
			}
			users := db.Collection("users")
			docs := []any{
				bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "email", Value: "a@x"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "a@x"}}}, {Key: "version", Value: int32(2)}, {Key: version.MarkerField, Value: tc.value}},
				bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "email", Value: "b@x"}, {Key: version.MarkerField, Value: tc.value}},
			}
			if _, err := users.InsertMany(ctx, docs); err != nil {
				t.Fatal(err)
			}
			_, err := r.DownTo(ctx, 1)
			if tc.partway {
				if !errors.Is(err, runner.ErrPartway) {
					t.Fatalf("DownTo(1) = %v, want ErrPartway", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("DownTo(1) with %s = %s: %v", version.MarkerField, tc.name, err)
			}
			n, err := users.CountDocuments(ctx, bson.D{{Key: "version", Value: bson.D{{Key: "$exists", Value: true}}}})
			if err != nil || n != 0 {
				t.Errorf("%d documents still carry a version after down (%v)", n, err)
			}
		})
	}
}
