package probe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mongomig/mongomig/internal/bsonx"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Topologies reported in [ServerInfo.Topology].
const (
	TopologyStandalone = "standalone"
	TopologyReplicaSet = "replicaSet"
	TopologySharded    = "sharded"
)

// ServerInfo describes the server a database lives on.
type ServerInfo struct {
	// Version is the MongoDB version the server reports (buildInfo).
	Version string `json:"version"`
	// FerretDBVersion is set when the server is FerretDB, which reports a
	// MongoDB version it only partly implements.
	FerretDBVersion string `json:"ferretdbVersion,omitempty"`
	// Topology is standalone, replicaSet or sharded.
	Topology string `json:"topology"`
	// SetName is the replica set name, if any.
	SetName        string `json:"setName,omitempty"`
	MaxWireVersion int32  `json:"maxWireVersion"`
}

// Capability is whether the server supports one feature mongomig uses.
type Capability struct {
	Available bool `json:"available"`
	// Reason explains an unavailable capability: the server's answer.
	Reason string `json:"reason,omitempty"`
	// NotPermitted: the server refused the probe for lack of privileges
	// (Unauthorized 13, or Atlas's 8000), so whether it has the capability
	// is unknown; Code is the server's error code.
	NotPermitted bool `json:"notPermitted,omitempty"`
	Code         int  `json:"code,omitempty"`
}

// Capabilities are the server features mongomig relies on, each found by
// trying it on a scratch collection rather than by trusting version numbers
// or listCommands (FerretDB lists collMod but answers it with 238).
type Capabilities struct {
	// Validators: create and collMod with validator, validationLevel and
	// validationAction. Without it, validators are enforced client-side only.
	Validators Capability `json:"validators"`
	// JSONSchemaQueries: {$jsonSchema: ...} in a find filter, which lets the
	// server count documents that fail a schema.
	JSONSchemaQueries Capability `json:"jsonSchemaQueries"`
	// PipelineUpdates: update with an aggregation pipeline, used by
	// server-side backfills.
	PipelineUpdates Capability `json:"pipelineUpdates"`
	// Transactions: multi-document transactions.
	Transactions Capability `json:"transactions"`
	// GuardedWrites: a single-document update filtered on _id and other
	// fields ({_id, version: 1, email: old}) finds its document through the
	// _id index and applies atomically, the two things backfill's guarded
	// writes rely on. It is known from the server, not tried (atomicity
	// cannot be shown by one write): FerretDB v1 evaluates any filter but a
	// bare _id by reading the whole collection, and applies an update in Go
	// after a separate read, so a guard there costs a scan and still does
	// not exclude a concurrent writer.
	GuardedWrites Capability `json:"guardedWrites"`
}

// GuardedWrites is [Capabilities.GuardedWrites] for the server info.
func GuardedWrites(info *ServerInfo) Capability {
	v := strings.TrimPrefix(info.FerretDBVersion, "v")
	if v == "" {
		return Capability{Available: true}
	}
	// FerretDB v2 runs on PostgreSQL with DocumentDB, which has neither
	// limit; v1 (and an embedded build, which reports "unknown") has both.
	if major, _, _ := strings.Cut(v, "."); major == "1" || major == "0" || major == "unknown" {
		v := "FerretDB v1"
		if info.FerretDBVersion != "unknown" {
			v += " (" + info.FerretDBVersion + ")"
		}
		return Capability{Reason: v + " filters on anything but a bare _id by scanning the collection and does not apply conditional updates atomically"}
	}
	return Capability{Available: true}
}

// ServerReport is the result of [Probe].
type ServerReport struct {
	Database     string       `json:"database"`
	Server       ServerInfo   `json:"server"`
	Capabilities Capabilities `json:"capabilities"`
}

// Probe reports the server's version and topology and which capabilities
// are available. It works in a scratch collection named
// mongomig_probe_<random> in db and drops it before returning (also when ctx
// is cancelled), so user data is never touched. A capability the server
// refuses is reported as unavailable with the server's answer; network
// failures and timeouts are returned as errors.
func Probe(ctx context.Context, db *mongo.Database) (*ServerReport, error) {
	info, err := Server(ctx, db)
	if err != nil {
		return nil, err
	}
	r := &ServerReport{Database: db.Name(), Server: *info}
	r.Capabilities.GuardedWrites = GuardedWrites(info)

	name := scratchName()
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropTimeout)
		defer cancel()
		_ = db.Collection(name).Drop(dctx)
	}()
	coll := db.Collection(name)

	if r.Capabilities.Validators, err = probeValidators(ctx, db, name); err != nil {
		return nil, err
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 1}}); err != nil {
		return nil, fmt.Errorf("probe: insert into scratch collection %s: %w", name, err)
	}
	if r.Capabilities.JSONSchemaQueries, err = probeJSONSchemaQuery(ctx, coll); err != nil {
		return nil, err
	}
	if r.Capabilities.PipelineUpdates, err = probePipelineUpdate(ctx, coll); err != nil {
		return nil, err
	}
	if r.Capabilities.Transactions, err = probeTransactions(ctx, db.Client(), coll); err != nil {
		return nil, err
	}
	return r, nil
}

func scratchName() string { return "mongomig_probe_" + bsonx.RandomHex(6) }

func Server(ctx context.Context, db *mongo.Database) (*ServerInfo, error) {
	admin := db.Client().Database("admin")
	var build struct {
		Version         string `bson:"version"`
		FerretDBVersion string `bson:"ferretdbVersion"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&build); err != nil {
		return nil, fmt.Errorf("buildInfo: %w", err)
	}
	var hello struct {
		SetName        string `bson:"setName"`
		Msg            string `bson:"msg"`
		MaxWireVersion int32  `bson:"maxWireVersion"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		return nil, fmt.Errorf("hello: %w", err)
	}
	info := &ServerInfo{Version: build.Version, FerretDBVersion: build.FerretDBVersion, SetName: hello.SetName, MaxWireVersion: hello.MaxWireVersion}
	switch {
	case hello.Msg == "isdbgrid":
		info.Topology = TopologySharded
	case hello.SetName != "":
		info.Topology = TopologyReplicaSet
	default:
		info.Topology = TopologyStandalone
	}
	return info, nil
}

// ValidatorProbeSchema is the validator Probe sends; tests compare the exact
// command documents against it.
var ValidatorProbeSchema = bson.D{{Key: "$jsonSchema", Value: bson.D{
	{Key: "bsonType", Value: "object"},
	{Key: "required", Value: bson.A{"x"}},
}}}

// probeValidators creates the scratch collection with a validator and then
// changes it with collMod; both must work. When the server refuses, the
// scratch collection is created without one so later probes can use it.
func probeValidators(ctx context.Context, db *mongo.Database, name string) (Capability, error) {
	create := bson.D{
		{Key: "create", Value: name},
		{Key: "validator", Value: ValidatorProbeSchema},
		{Key: "validationLevel", Value: "strict"},
		{Key: "validationAction", Value: "error"},
	}
	err := db.RunCommand(ctx, create).Err()
	if refused, cerr := classify(err, "create with validator"); cerr != nil || refused.Reason != "" {
		if cerr != nil {
			return Capability{}, cerr
		}
		if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: name}}).Err(); err != nil {
			return Capability{}, fmt.Errorf("probe: create scratch collection %s: %w", name, err)
		}
		return refused, nil
	}
	collMod := bson.D{
		{Key: "collMod", Value: name},
		{Key: "validator", Value: ValidatorProbeSchema},
		{Key: "validationLevel", Value: "moderate"},
		{Key: "validationAction", Value: "error"},
	}
	refused, cerr := classify(db.RunCommand(ctx, collMod).Err(), "collMod with validator")
	if cerr != nil || refused.Reason != "" {
		return refused, cerr
	}
	return Capability{Available: true}, nil
}

func probeJSONSchemaQuery(ctx context.Context, coll *mongo.Collection) (Capability, error) {
	filter := bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "required", Value: bson.A{"x"}}}}}
	n, err := coll.CountDocuments(ctx, filter)
	if refused, cerr := classify(err, "$jsonSchema query"); cerr != nil || refused.Reason != "" {
		return refused, cerr
	}
	if n != 1 {
		return Capability{Reason: fmt.Sprintf("$jsonSchema query matched %d of 1 matching documents", n)}, nil
	}
	return Capability{Available: true}, nil
}

func probePipelineUpdate(ctx context.Context, coll *mongo.Collection) (Capability, error) {
	pipeline := mongo.Pipeline{{{Key: "$set", Value: bson.D{{Key: "y", Value: "$x"}}}}}
	_, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, pipeline)
	if refused, cerr := classify(err, "pipeline update"); cerr != nil || refused.Reason != "" {
		return refused, cerr
	}
	var got struct {
		Y any `bson:"y"`
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&got); err != nil {
		return Capability{}, fmt.Errorf("probe: read back pipeline update: %w", err)
	}
	if got.Y != int32(1) {
		return Capability{Reason: fmt.Sprintf("pipeline update was accepted but set y to %v instead of 1", got.Y)}, nil
	}
	return Capability{Available: true}, nil
}

func probeTransactions(ctx context.Context, client *mongo.Client, coll *mongo.Collection) (Capability, error) {
	sess, err := client.StartSession()
	if err != nil {
		return Capability{}, fmt.Errorf("probe: start session: %w", err)
	}
	defer sess.EndSession(context.WithoutCancel(ctx))
	_, err = sess.WithTransaction(ctx, func(ctx context.Context) (any, error) {
		_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}})
		return nil, err
	}, options.Transaction())
	refused, cerr := classify(err, "transaction")
	if cerr != nil || refused.Reason != "" {
		return refused, cerr
	}
	return Capability{Available: true}, nil
}

// classify sorts a probe's error: nil is success (zero Capability, nil);
// a server's refusal is an unavailable capability with the reason; a
// network failure, timeout or cancellation is returned as an error, since
// it says nothing about the capability.
func classify(err error, what string) (Capability, error) {
	if err == nil {
		return Capability{}, nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || mongo.IsNetworkError(err) || mongo.IsTimeout(err) {
		return Capability{}, fmt.Errorf("probe %s: %w", what, err)
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		for _, code := range []int{codeUnauthorized, codeAtlasError} {
			if se.HasErrorCode(code) {
				return Capability{NotPermitted: true, Code: code, Reason: fmt.Sprintf("%s not permitted (code %d): %s; the user needs the createCollection, collMod, insert, update, find and dropCollection actions on the database",
					what, code, ServerMessage(err))}, nil
			}
		}
		return Capability{Reason: fmt.Sprintf("%s refused: %s", what, ServerMessage(err))}, nil
	}
	return Capability{}, fmt.Errorf("probe %s: %w", what, err)
}

// Server error codes mongomig classifies.
const (
	codeUnauthorized    = 13
	codeAtlasError      = 8000 // Atlas's refusal of an action (user privileges or cluster tier)
	codeCommandNotFound = 59
	codeNotImplemented  = 238
)

// dropTimeout bounds clean-up done after the caller's context ended.
const dropTimeout = 10 * time.Second

// IsNotSupported reports whether err is a server's answer that a command or
// option is not implemented (NotImplemented 238 or CommandNotFound 59), the
// answer MongoDB-compatible servers give to collMod and validators.
func IsNotSupported(err error) bool {
	var se mongo.ServerError
	return errors.As(err, &se) && (se.HasErrorCode(codeNotImplemented) || se.HasErrorCode(codeCommandNotFound))
}
