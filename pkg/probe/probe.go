package probe

import (
	"bytes"
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
	// FerretDBVersion is set when the server is FerretDB v1, which reports
	// a MongoDB version it only partly implements (buildInfo's
	// ferretdbVersion; "unknown" for an embedded build).
	FerretDBVersion string `json:"ferretdbVersion,omitempty"`
	// FerretDB2Version is set when the server is FerretDB 2 (buildInfo's
	// ferretdb.version), which runs on DocumentDB and has none of v1's
	// limits that FerretDBVersion stands for; what it lacks is probed.
	FerretDB2Version string `json:"ferretdb2Version,omitempty"`
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
	// CreateKeepsOptions: a collection created with a validator,
	// validationLevel and validationAction lists all three, as sent, in
	// listCollections. Stock FerretDB 2 accepts them and keeps none, so a
	// validator sent with create silently does not exist there.
	CreateKeepsOptions Capability `json:"createKeepsOptions"`
	// ChangeStreams: a change stream opened on a collection delivers the
	// insert that follows.
	ChangeStreams Capability `json:"changeStreams"`
	// Keywords is which $jsonSchema keywords and bsonType aliases the
	// server's validators enforce as MongoDB does.
	Keywords KeywordSupport `json:"keywords"`
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
// are available. It works in a scratch database named
// mongomig_probe_<random> on db's client and drops it before returning
// (also when ctx is cancelled): nothing is read from or written to db, or
// to any other database but the scratch one. A capability the server
// refuses is reported as unavailable with the server's answer; network
// failures and timeouts are returned as errors.
func Probe(ctx context.Context, db *mongo.Database) (*ServerReport, error) {
	info, err := Server(ctx, db)
	if err != nil {
		return nil, err
	}
	r := &ServerReport{Database: db.Name(), Server: *info}
	c := &r.Capabilities
	c.GuardedWrites = GuardedWrites(info)

	scratch := db.Client().Database(scratchName())
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropTimeout)
		defer cancel()
		_ = scratch.Drop(dctx)
	}()
	coll := scratch.Collection(scratchCollection)

	c.Validators, c.CreateKeepsOptions, err = probeValidators(ctx, scratch, scratchCollection)
	var refused *scratchRefused
	if errors.As(err, &refused) {
		// Without a scratch collection nothing else can be tried: every
		// capability is what create answered (mostly: not permitted).
		for _, p := range []*Capability{&c.Validators, &c.CreateKeepsOptions, &c.JSONSchemaQueries, &c.PipelineUpdates, &c.Transactions, &c.ChangeStreams} {
			*p = refused.answer
		}
		c.Keywords = KeywordSupport{Reason: "not probed: " + refused.answer.Reason}
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	if c.Keywords, err = probeKeywords(ctx, scratch, c.Validators); err != nil {
		return nil, err
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 1}}); err != nil {
		return nil, fmt.Errorf("probe: insert into scratch collection %s.%s: %w", scratch.Name(), scratchCollection, err)
	}
	if c.JSONSchemaQueries, err = probeJSONSchemaQuery(ctx, coll); err != nil {
		return nil, err
	}
	if c.PipelineUpdates, err = probePipelineUpdate(ctx, coll); err != nil {
		return nil, err
	}
	if c.Transactions, err = probeTransactions(ctx, db.Client(), coll); err != nil {
		return nil, err
	}
	if c.ChangeStreams, err = probeChangeStreams(ctx, coll); err != nil {
		return nil, err
	}
	return r, nil
}

// ScratchPrefix starts the name of the database [Probe] works in.
const ScratchPrefix = "mongomig_probe_"

// scratchCollection is the collection of the scratch database most probes
// use (the keyword probe has its own, [keywordCollection]).
const scratchCollection = "probe"

func scratchName() string { return ScratchPrefix + bsonx.RandomHex(6) }

// Server reports the version and topology of the server db lives on, from
// buildInfo and hello on the admin database.
func Server(ctx context.Context, db *mongo.Database) (*ServerInfo, error) {
	admin := db.Client().Database("admin")
	var build struct {
		Version         string `bson:"version"`
		FerretDBVersion string `bson:"ferretdbVersion"` // FerretDB v1
		FerretDB        struct {
			Version string `bson:"version"`
		} `bson:"ferretdb"` // FerretDB v2
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
	info := &ServerInfo{Version: build.Version, FerretDBVersion: build.FerretDBVersion, FerretDB2Version: build.FerretDB.Version, SetName: hello.SetName, MaxWireVersion: hello.MaxWireVersion}
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

// scratchRefused is the server's refusal of a plain create in the scratch
// database: no capability can be tried.
type scratchRefused struct{ answer Capability }

func (e *scratchRefused) Error() string { return e.answer.Reason }

// ValidatorProbeSchema is the validator Probe sends (a new copy at each
// call); tests compare the exact command documents against it.
func ValidatorProbeSchema() bson.D {
	return bson.D{{Key: "$jsonSchema", Value: bson.D{
		{Key: "bsonType", Value: "object"},
		{Key: "required", Value: bson.A{"x"}},
	}}}
}

// probeValidators creates the scratch collection with a validator, reads
// it back (createKeeps), then changes it with collMod and reads that back
// too; validators are available when collMod's validator is held, whatever
// create kept. When create refuses, the scratch collection is created
// without one so later probes can use it.
func probeValidators(ctx context.Context, db *mongo.Database, name string) (validators, createKeeps Capability, err error) {
	create := bson.D{
		{Key: "create", Value: name},
		{Key: "validator", Value: ValidatorProbeSchema()},
		{Key: "validationLevel", Value: "strict"},
		{Key: "validationAction", Value: "error"},
	}
	err = db.RunCommand(ctx, create).Err()
	if refused, cerr := classify(err, "create with validator"); cerr != nil || refused.Reason != "" {
		if cerr != nil {
			return Capability{}, Capability{}, cerr
		}
		err := db.RunCommand(ctx, bson.D{{Key: "create", Value: name}}).Err()
		if plain, cerr := classify(err, "create"); cerr != nil || plain.Reason != "" {
			if cerr == nil {
				cerr = &scratchRefused{plain}
			}
			return Capability{}, Capability{}, fmt.Errorf("probe: create scratch collection %s.%s: %w", db.Name(), name, cerr)
		}
		return refused, refused, nil
	}
	if createKeeps, err = heldOptions(ctx, db, name, "create", "strict"); err != nil {
		return Capability{}, Capability{}, err
	}
	collMod := bson.D{
		{Key: "collMod", Value: name},
		{Key: "validator", Value: ValidatorProbeSchema()},
		{Key: "validationLevel", Value: "moderate"},
		{Key: "validationAction", Value: "error"},
	}
	refused, cerr := classify(db.RunCommand(ctx, collMod).Err(), "collMod with validator")
	if cerr != nil || refused.Reason != "" {
		return refused, createKeeps, cerr
	}
	validators, err = heldOptions(ctx, db, name, "collMod", "moderate")
	return validators, createKeeps, err
}

// heldOptions reads collection name's options back with listCollections:
// available when they are [ValidatorProbeSchema], level and action error,
// as the command named by what sent them.
func heldOptions(ctx context.Context, db *mongo.Database, name, what, level string) (Capability, error) {
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: name}})
	if refused, cerr := classify(err, "listCollections"); cerr != nil || refused.Reason != "" {
		return refused, cerr
	}
	var opts struct {
		Validator        bson.Raw `bson:"validator"`
		ValidationLevel  string   `bson:"validationLevel"`
		ValidationAction string   `bson:"validationAction"`
	}
	if len(specs) == 1 {
		if err := bson.Unmarshal(specs[0].Options, &opts); err != nil {
			return Capability{}, fmt.Errorf("probe: decode the options listCollections shows for %s: %w", name, err)
		}
	}
	want, err := bson.Marshal(ValidatorProbeSchema())
	if err != nil {
		return Capability{}, err
	}
	switch {
	case len(specs) != 1:
		return Capability{Reason: fmt.Sprintf("%s was accepted but listCollections shows %d collections named %s", what, len(specs), name)}, nil
	case opts.Validator == nil:
		return Capability{Reason: what + " accepted the validator but listCollections shows none: the server dropped it"}, nil
	case !bytes.Equal(opts.Validator, want):
		return Capability{Reason: fmt.Sprintf("%s accepted the validator %s but listCollections shows %s", what, bson.Raw(want), opts.Validator)}, nil
	case opts.ValidationLevel != level || opts.ValidationAction != "error":
		return Capability{Reason: fmt.Sprintf("%s accepted validationLevel %s and validationAction error but listCollections shows %q and %q", what, level, opts.ValidationLevel, opts.ValidationAction)}, nil
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
		// With x: the scratch collection's validator requires it.
		_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: 2}})
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
				return Capability{NotPermitted: true, Code: code, Reason: fmt.Sprintf("%s not permitted (code %d): %s; the user needs the createCollection, collMod, insert, update, find, changeStream and dropDatabase actions on the scratch database "+ScratchPrefix+"*",
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
