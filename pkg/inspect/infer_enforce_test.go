package inspect_test

import (
	"context"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/inspect"
	"github.com/mongomig/mongomig/pkg/probe"
)

// TestInitTightenedBaselineAcceptsOrdinaryWritesMongoDB:
// docs/adopting.md's "tighten to error" done on the sample data, on a
// server that enforces validators: the baseline applied with
// validationAction error accepts the next ordinary order (a whole-number
// price and total, a new SKU, an int64 quantity as a Go int64 field
// stores it) and still rejects one that breaks it (an unknown status).
func TestInitTightenedBaselineAcceptsOrdinaryWritesMongoDB(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.MongoDB(t, "mongomig_w2f_enforce", "TestInitSchemaAcceptsOrdinaryWrites checks the schema client-side")
	if _, err := sampledata.Load(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	if err := sampledata.FixInvalid(ctx, db); err != nil {
		t.Fatal(err)
	}
	rep, err := probe.Probe(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	// A server that does not enforce enum (FerretDB 2) fails every write
	// under a validator holding one: infer without enums there.
	enumOK := rep.Capabilities.Keywords.Known && !slices.Contains(rep.Capabilities.Keywords.Unsupported, "enum")
	opts := inspect.InferOptions{Collections: []string{"orders"}}
	if !enumOK {
		opts.EnumMax = -1
	}
	inf, err := inspect.Infer(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	file, err := inf.File("0001_baseline.yaml", inspect.FileOptions{Level: "strict", Action: "error"})
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, db, fstest.MapFS{"0001_baseline.yaml": &fstest.MapFile{Data: file}})
	if _, err := r.Up(ctx); err != nil {
		t.Fatal(err)
	}
	order := func(status string) bson.D {
		return bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "userId", Value: sampledata.ID("users", 3)},
			{Key: "items", Value: bson.A{bson.D{{Key: "sku", Value: "CAP-5"}, {Key: "name", Value: "Cap"}, {Key: "price", Value: int32(12)}, {Key: "qty", Value: int64(2)}}}},
			{Key: "status", Value: status}, {Key: "createdAt", Value: time.Now()}, {Key: "total", Value: int32(24)}}
	}
	if _, err := db.Collection("orders").InsertOne(ctx, order("paid")); err != nil {
		t.Errorf("an ordinary new order is rejected by the tightened baseline: %v\n%s", err, file)
	}
	if !enumOK {
		t.Skip("the server does not enforce the $jsonSchema keyword enum: the rejection of an unknown status is not checked")
	}
	if _, err := db.Collection("orders").InsertOne(ctx, order("payed")); err == nil {
		t.Errorf("an order with an unknown status passes the tightened baseline:\n%s", file)
	}
}
