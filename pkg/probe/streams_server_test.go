package probe_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/cmdlog"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/probe"
)

// changeStreamsAlone: ChangeStreams sends the stream's aggregate
// ($changeStream first) on a collection of a scratch database, and
// nothing to db; on the test servers, which have none, the capability is
// unavailable with the server's answer naming $changeStream; the scratch
// database is dropped.
func changeStreamsAlone(t *testing.T, uri string) {
	ctx := context.Background()
	rec := &cmdlog.Recorder{}
	client := sandboxtest.Connect(t, uri, options.Client().SetMonitor(rec.Monitor()))
	db := client.Database("probe_streams_app")
	c, err := probe.ChangeStreams(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if c.Available || !strings.Contains(c.Reason, "change stream refused") || !strings.Contains(c.Reason, "$changeStream") {
		t.Errorf("change streams = %+v, want unavailable with the server's answer", c)
	}
	aggs := rec.Named("aggregate")
	if len(aggs) != 1 {
		t.Fatalf("%d aggregates, want 1", len(aggs))
	}
	scratch := aggs[0].Lookup("$db").StringValue()
	if _, err := aggs[0].LookupErr("pipeline", "0", "$changeStream"); err != nil || aggs[0].Lookup("aggregate").StringValue() != "probe" || !strings.HasPrefix(scratch, probe.ScratchPrefix) {
		t.Errorf("aggregate sent: %s, want $changeStream on the scratch collection probe", aggs[0])
	}
	for _, cmd := range rec.All() {
		if d, _ := cmd.Lookup("$db").StringValueOK(); d == db.Name() {
			t.Errorf("sent to %s: %s", db.Name(), cmd)
		}
	}
	assertDropped(t, client, scratch)
}

func assertDropped(t *testing.T, client *mongo.Client, scratch string) {
	t.Helper()
	dbs, err := client.ListDatabaseNames(context.Background(), bson.D{{Key: "name", Value: scratch}})
	if err != nil || len(dbs) != 0 {
		t.Errorf("scratch database %s left behind (%v, %v)", scratch, dbs, err)
	}
}

func TestChangeStreamsAlone(t *testing.T) { changeStreamsAlone(t, sandboxtest.Start(t).URI()) }

func TestChangeStreamsAloneMongoDB(t *testing.T) {
	if os.Getenv("MONGOMIG_TEST_URI") == "" {
		t.Skip("MONGOMIG_TEST_URI is not set: TestChangeStreamsAlone covers the sandbox")
	}
	changeStreamsAlone(t, os.Getenv("MONGOMIG_TEST_URI"))
}
