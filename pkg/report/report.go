package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/gopanic"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/validator"
	"github.com/mongomig/mongomig/pkg/version"
)

// Reporter reports on the documents of one database against the
// validators of one set of migration files. Build it with [New]; it only
// reads, and is safe for concurrent use.
type Reporter struct {
	db         *mongo.Database
	migrations []*migration.Migration
	registry   *version.Registry
	// versionOpts build the registries of the files up to a dry run's
	// target.
	versionOpts []version.Option
}

// New returns a reporter for db and the migrations ms (in version order,
// as [migration.Load] returns them; a caller checks them first, as
// pkg/runner's New does). opts are the version options the application
// builds its registry with (the version field, the Go functions of func
// steps); a func step this program lacks fails only the documents that
// need it. The error is the registry's ([version.FromMigrations]).
func New(db *mongo.Database, ms []*migration.Migration, opts ...version.Option) (*Reporter, error) {
	if db == nil {
		return nil, errors.New("report: nil database")
	}
	reg, err := version.FromMigrations(ms, append([]version.Option{version.AllowMissingFuncs(true)}, opts...)...)
	if err != nil {
		return nil, err
	}
	return &Reporter{db: db, migrations: ms, registry: reg, versionOpts: opts}, nil
}

// ErrUnknownCollection is returned when a collection asked for has no
// validator in the migration files.
var ErrUnknownCollection = version.ErrUnknownCollection

// latest is the version every migration is at or below.
const latest int64 = math.MaxInt64

// Options configure [Reporter.Validate] and [Reporter.DryRun].
type Options struct {
	// Collections limits the report; empty means every collection with a
	// validator (for a dry run: every collection whose validator a pending
	// migration changes).
	Collections []string
	// Sample reads only the first N documents of each collection in _id
	// order (not random: FerretDB has no $sample); 0 scans everything.
	Sample int64
	// Workers validate in parallel; 0 means GOMAXPROCS.
	Workers int
	// ChunkSize is how many documents pass between Progress calls (and the
	// cursor's batch size, at most 1000); default 1000.
	ChunkSize int64
	// Progress, if set, is called every ChunkSize documents and at the end.
	Progress func(collection string, scanned, total int64)
	// AllExampleIDs keeps the _id of every failing document instead of
	// the smallest MaxExampleIDs: memory then grows with the failures.
	AllExampleIDs bool
	// ShowKeyValues puts the colliding key values of a predicted unique
	// index build in the report (IndexCollision.Key). By default a
	// report gives counts and _ids only: the key values are production
	// data, and a pull request chooses the index ({ssn: 1}) whose values
	// a posted report would quote.
	ShowKeyValues bool
}

// Collection is one collection's validation report.
type Collection struct {
	Collection string `json:"collection"`
	// ValidatorFrom is the migration whose validator the documents are
	// checked against.
	ValidatorFrom    int64          `json:"validatorFrom"`
	ValidationLevel  string         `json:"validationLevel"`
	ValidationAction string         `json:"validationAction"`
	Scanned          int64          `json:"scanned"`
	Sampled          bool           `json:"sampled"`
	Versions         []VersionCount `json:"versions"`
	// Failing counts documents that fail after the upgrades they would get.
	Failing int64          `json:"failing"`
	Groups  []FailureGroup `json:"failures"`
	// UpgradeErrors are documents their own upgrade cannot transform.
	UpgradeErrors []FailureGroup `json:"upgradeErrors,omitempty"`
	// ServerCheck says whether the server's own count ($jsonSchema query
	// on the documents as stored) agrees with mongomig's.
	ServerCheck *ServerCheck `json:"serverCheck,omitempty"`
}

// ServerCheck compares mongomig's count of stored documents failing the
// schema with the server's ($nor: [{$jsonSchema: ...}]). When the check
// could not run (Available false, Reason says why), Client, Server and
// Agrees are nil: nothing was compared.
type ServerCheck struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	Client    *int64 `json:"client"`
	Server    *int64 `json:"server"`
	Agrees    *bool  `json:"agrees"`
}

// Report is a validation report.
type Report struct {
	Database    string       `json:"database"`
	Collections []Collection `json:"collections"`
	// Failing is the total of failing documents.
	Failing int64 `json:"failing"`
	// WouldReject is true when documents fail a validator whose action is
	// error, or a pending unique index would fail to build (the CLI exits 3).
	WouldReject bool `json:"wouldReject"`
	// IndexBuilds predicts the unique indexes the pending migrations create
	// (dry runs only).
	IndexBuilds []IndexBuild `json:"indexBuilds,omitempty"`
	// Discards count what each step of the pending migrations that can
	// discard stored data would discard (dry runs only; discards.go).
	Discards []version.DiscardCount `json:"discards,omitempty"`
}

// Validate is the report of `mongomig validate`: it checks every document
// of the reported collections against the validator the migration files
// end with, after the upgrades each document would get (pkg/version), and
// groups the failures. It only reads.
func (r *Reporter) Validate(ctx context.Context, opts Options) (*Report, error) {
	names := opts.Collections
	if len(names) == 0 {
		names = bsonx.CollectionsWithValidators(r.migrations)
	}
	return r.report(ctx, names, opts, latest)
}

// DryRun is the report part of `up --dry-run`: the collections whose
// validator a pending migration changes, and the unique indexes they
// create. pending are the migrations the run would apply, in version
// order (pkg/runner's Pending lists them); none gives an empty report.
func (r *Reporter) DryRun(ctx context.Context, pending []*migration.Migration, opts Options) (*Report, error) {
	if len(pending) == 0 {
		return &Report{Database: r.db.Name(), Collections: []Collection{}}, nil
	}
	names := bsonx.CollectionsWithValidators(pending)
	if len(opts.Collections) > 0 {
		names = intersect(names, opts.Collections)
	}
	// Against the validators in force at to, after the upgrades documents
	// get up to to (as validate would report after `up --to N`).
	at := pending[len(pending)-1].Version
	rep, err := r.report(ctx, names, opts, at)
	if err != nil {
		return nil, err
	}
	if rep.IndexBuilds, err = r.predictIndexBuilds(ctx, pending, opts.ShowKeyValues); err != nil {
		return nil, err
	}
	for _, b := range rep.IndexBuilds {
		rep.WouldReject = rep.WouldReject || b.Fails()
	}
	if rep.Discards, err = r.dryRunDiscards(ctx, pending, opts.Collections); err != nil {
		return nil, err
	}
	return rep, nil
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		for _, y := range b {
			if x == y {
				out = append(out, x)
			}
		}
	}
	return out
}

// report checks the named collections against the validators in force
// once migration at is applied, after the upgrades up to at.
func (r *Reporter) report(ctx context.Context, names []string, opts Options, at int64) (*Report, error) {
	reg, err := r.registryAt(at)
	if err != nil {
		return nil, err
	}
	rep := &Report{Database: r.db.Name(), Collections: []Collection{}}
	for _, name := range names {
		cr, err := r.reportCollection(ctx, name, opts, at, reg)
		if err != nil {
			return nil, err
		}
		rep.Collections = append(rep.Collections, *cr)
		rep.Failing += cr.Failing
		if cr.Failing > 0 && cr.ValidationAction == string(migration.ActionError) {
			rep.WouldReject = true
		}
	}
	return rep, nil
}

// docResult is what a worker found in one document.
type docResult struct {
	id       string
	version  int64
	invalid  string // a version field that is not a number
	failures []validator.Failure
	upgrade  error
	rawFails bool // fails as stored (for the server cross-check)
}

// registryAt is the version registry of the migrations up to at.
func (r *Reporter) registryAt(at int64) (*version.Registry, error) {
	var ms []*migration.Migration
	for _, m := range r.migrations {
		if m.Version <= at {
			ms = append(ms, m)
		}
	}
	if len(ms) == len(r.migrations) {
		return r.registry, nil
	}
	return version.FromMigrations(ms, append([]version.Option{version.AllowMissingFuncs(true)}, r.versionOpts...)...)
}

func (r *Reporter) reportCollection(ctx context.Context, name string, opts Options, at int64, reg *version.Registry) (*Collection, error) {
	state := migration.StateBefore(r.migrations, name, min(at, math.MaxInt64-1)+1)
	schemaDoc, ok := (&migration.Collection{Validator: state.Validator}).JSONSchema()
	if !ok {
		return nil, fmt.Errorf("%w: %s has no validator in the migration files (%s)", ErrUnknownCollection, name, bsonx.KnownList(bsonx.CollectionsWithValidators(r.migrations)))
	}
	schema, err := validator.Compile(schemaDoc)
	if err != nil {
		return nil, fmt.Errorf("validator of %s (migration %d): %w", name, state.From, err)
	}
	cr := &Collection{
		Collection: name, ValidatorFrom: state.From, Sampled: opts.Sample > 0,
		ValidationLevel:  string(bsonx.OrDefault(state.Level, migration.LevelStrict)),
		ValidationAction: string(bsonx.OrDefault(state.Action, migration.ActionError)),
		Versions:         []VersionCount{}, Groups: []FailureGroup{},
	}
	coll := r.db.Collection(name)
	// The total only feeds the progress bar: FerretDB counts by scanning,
	// so it is asked for only when someone watches.
	var total int64
	if opts.Progress != nil {
		n, err := coll.EstimatedDocumentCount(ctx)
		if err != nil {
			return nil, fmt.Errorf("count %s: %w", name, err)
		}
		total = n
		if opts.Sample > 0 && opts.Sample < total {
			total = opts.Sample
		}
	}
	check := r.serverCanCount(ctx, coll, schemaDoc, opts)

	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	docs := make(chan bson.Raw, 4*workers)
	results := make(chan docResult, 4*workers)
	wait := startCheckers(workers, docs, results, "the validation report's check of a "+name+" document", func(raw bson.Raw) docResult {
		return checkDocument(reg, name, schema, raw, check != nil && check.Available)
	})
	readErr := make(chan error, 1)
	var panicked error // a checker's panic, set before results is closed
	go func() {
		readErr <- r.scan(ctx, coll, opts, total, docs)
		close(docs)
		panicked = wait()
		close(results)
	}()
	agg := newAggregate(opts.AllExampleIDs)
	for res := range results {
		agg.add(res)
	}
	if err := <-readErr; err != nil {
		return nil, err
	}
	if panicked != nil {
		return nil, panicked
	}
	agg.fill(cr)
	if check != nil && check.Available {
		r.crossCheck(ctx, coll, schemaDoc, cr.Scanned, agg.rawFailing, check)
	}
	cr.ServerCheck = check
	return cr, nil
}

// crossCheck asks the server to count the stored documents failing the
// schema. With no document there is nothing to compare, and a server
// without $jsonSchema queries (FerretDB) answers an empty or missing
// collection without evaluating the filter: the check is then not
// available rather than a vacuous "agrees".
func (r *Reporter) crossCheck(ctx context.Context, coll *mongo.Collection, schemaDoc bson.D, scanned, client int64, check *ServerCheck) {
	if scanned == 0 {
		check.Available, check.Reason = false, "the collection is empty: nothing to compare"
		names, err := r.db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: coll.Name()}})
		if err == nil && len(names) == 0 {
			check.Reason = "the collection does not exist: nothing to compare"
		}
		return
	}
	n, err := coll.CountDocuments(ctx, bson.D{{Key: "$nor", Value: bson.A{bson.D{{Key: "$jsonSchema", Value: schemaDoc}}}}})
	if err != nil {
		check.Available, check.Reason = false, probe.ServerMessage(err)
		return
	}
	agrees := n == client
	check.Client, check.Server, check.Agrees = &client, &n, &agrees
}

// serverCanCount tries a $jsonSchema query on the collection; nil when the
// report is sampled (the server would count everything).
func (r *Reporter) serverCanCount(ctx context.Context, coll *mongo.Collection, schema bson.D, opts Options) *ServerCheck {
	if opts.Sample > 0 {
		return nil
	}
	err := coll.FindOne(ctx, bson.D{{Key: "$jsonSchema", Value: schema}}).Err()
	if err == nil || errors.Is(err, mongo.ErrNoDocuments) {
		return &ServerCheck{Available: true}
	}
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		return &ServerCheck{Reason: fmt.Sprintf("the server has no $jsonSchema queries (%s %d)", ce.Name, ce.Code)}
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		return &ServerCheck{Reason: "the server has no $jsonSchema queries: " + probe.ServerMessage(err)}
	}
	return &ServerCheck{Reason: probe.ServerMessage(err)}
}

// scan reads the documents with one cursor (a sample: the first N in _id
// order), sending copies to out. It only reads, so a long-open cursor is
// harmless; progress is reported every ChunkSize documents.
func (r *Reporter) scan(ctx context.Context, coll *mongo.Collection, opts Options, total int64, out chan<- bson.Raw) error {
	chunk := opts.ChunkSize
	if chunk <= 0 {
		chunk = 1000
	}
	fo := options.Find().SetBatchSize(int32(min(chunk, 1000)))
	if opts.Sample > 0 {
		fo.SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(opts.Sample)
	}
	cur, err := coll.Find(ctx, bson.D{}, fo)
	if err != nil {
		return fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	var scanned int64
	for cur.Next(ctx) {
		select {
		case out <- append(bson.Raw(nil), cur.Current...):
		case <-ctx.Done():
			return ctx.Err()
		}
		scanned++
		if opts.Progress != nil && scanned%chunk == 0 {
			opts.Progress(coll.Name(), scanned, total)
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("read %s after %d documents: %w", coll.Name(), scanned, err)
	}
	if opts.Progress != nil && scanned%chunk != 0 {
		opts.Progress(coll.Name(), scanned, total)
	}
	return nil
}

func checkDocument(reg *version.Registry, coll string, schema *validator.Schema, raw bson.Raw, rawCheck bool) (res docResult) {
	defer func() {
		if res.upgrade != nil || len(res.failures) > 0 {
			res.id = bsonx.IDOf(raw) // only failing documents need a printable id
		}
	}()
	if rawCheck {
		res.rawFails = len(schema.Validate(raw)) > 0
	}
	up, _, err := reg.UpgradeRaw(coll, raw)
	// The version counted is the stored one, also for a document too new
	// or impossible to upgrade; what is invalid is pkg/version's rule, as
	// for status.
	var verr *version.VersionError
	if v, ok := reg.VersionOfRaw(raw); ok && !errors.As(err, &verr) {
		res.version = v
	} else {
		res.invalid = versionText(raw, reg.Field())
	}
	if err != nil {
		res.upgrade = err
		return res
	}
	// Validation reads raw BSON: a current document is never decoded.
	res.failures = schema.Validate(up)
	return res
}

func versionText(raw bson.Raw, field string) string {
	rv, err := raw.LookupErr(field)
	if err != nil {
		return "(missing)"
	}
	return string(bsonx.ExtJSONOf(rv))
}

// startCheckers starts n goroutines that check every document of docs
// into results. wait, called once docs is closed, returns when they have
// stopped, with the first panic of a check as a *PanicError: a checker
// that panics goes on draining docs, so that the reader never blocks.
func startCheckers(n int, docs <-chan bson.Raw, results chan<- docResult, where string, check func(bson.Raw) docResult) (wait func() error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for raw := range docs {
				var perr error
				res := func() docResult {
					defer gopanic.RecoverTo(&perr, where)
					return check(raw)
				}()
				if perr != nil {
					mu.Lock()
					if first == nil {
						first = perr
					}
					mu.Unlock()
					continue
				}
				results <- res
			}
		}()
	}
	return func() error {
		wg.Wait()
		return first
	}
}
