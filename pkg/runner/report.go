package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/validator"
	"github.com/mongomig/mongomig/pkg/version"
)

// ReportOptions configure [Runner.Report].
type ReportOptions struct {
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
}

// MaxExampleIDs is how many _ids a failure group keeps.
const MaxExampleIDs = 5

// FailureGroup is every document failing one rule at one path.
type FailureGroup struct {
	Path    string `json:"path"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
	Count   int64  `json:"count"`
	// ExampleIDs are up to MaxExampleIDs _ids (relaxed Extended JSON), the
	// smallest in _id order.
	ExampleIDs []string `json:"exampleIds"`
}

// CollectionReport is one collection's validation report.
type CollectionReport struct {
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
// schema with the server's ($nor: [{$jsonSchema: ...}]).
type ServerCheck struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	Client    int64  `json:"client"`
	Server    int64  `json:"server"`
	Agrees    bool   `json:"agrees"`
}

// Report is a validation report.
type Report struct {
	Database    string             `json:"database"`
	Collections []CollectionReport `json:"collections"`
	// Failing is the total of failing documents.
	Failing int64 `json:"failing"`
	// WouldReject is true when documents fail a validator whose action is
	// error (the CLI exits 3).
	WouldReject bool `json:"wouldReject"`
}

// Report checks every document of the reported collections against the
// validator the migration files end with, after the upgrades each document
// would get (pkg/version), and groups the failures. It only reads.
func (r *Runner) Report(ctx context.Context, opts ReportOptions) (*Report, error) {
	names := opts.Collections
	if len(names) == 0 {
		names = r.collectionsWithValidators(nil)
	}
	return r.report(ctx, names, opts)
}

// DryRunReport is the report part of `up --dry-run`: the collections whose
// validator a pending migration (up to to; 0: all) changes.
func (r *Runner) DryRunReport(ctx context.Context, to int64, opts ReportOptions) (*Report, error) {
	pending, err := r.pending(ctx, to)
	if err != nil {
		return nil, err
	}
	if len(pending) == 0 {
		return &Report{Database: r.db.Name(), Collections: []CollectionReport{}}, nil
	}
	names := r.collectionsWithValidators(pending)
	if len(opts.Collections) > 0 {
		names = intersect(names, opts.Collections)
	}
	return r.report(ctx, names, opts)
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

// collectionsWithValidators lists, sorted, the collections whose validator
// ms (nil: all migrations) declare.
func (r *Runner) collectionsWithValidators(ms []*migration.Migration) []string {
	if ms == nil {
		ms = r.migrations
	}
	seen := map[string]bool{}
	for _, m := range ms {
		for _, c := range m.Collections {
			if c.Validator != nil {
				seen[c.Name] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (r *Runner) report(ctx context.Context, names []string, opts ReportOptions) (*Report, error) {
	rep := &Report{Database: r.db.Name(), Collections: []CollectionReport{}}
	for _, name := range names {
		cr, err := r.reportCollection(ctx, name, opts)
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

func (r *Runner) reportCollection(ctx context.Context, name string, opts ReportOptions) (*CollectionReport, error) {
	state := stateBefore(r.migrations, name, 1<<62)
	schemaDoc, ok := (&migration.Collection{Validator: state.validator}).JSONSchema()
	if !ok {
		return nil, fmt.Errorf("%s has no validator in the migration files", name)
	}
	schema, err := validator.Compile(schemaDoc)
	if err != nil {
		return nil, fmt.Errorf("validator of %s (migration %d): %w; run mongomig lint", name, state.from, err)
	}
	cr := &CollectionReport{
		Collection: name, ValidatorFrom: state.from, Sampled: opts.Sample > 0,
		ValidationLevel:  string(orDefault(state.level, migration.LevelStrict)),
		ValidationAction: string(orDefault(state.action, migration.ActionError)),
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
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for raw := range docs {
				results <- r.checkDocument(name, schema, raw, check != nil && check.Available)
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		readErr <- r.scan(ctx, coll, opts, total, docs)
		close(docs)
		wg.Wait()
		close(results)
	}()
	agg := newAggregate()
	for res := range results {
		agg.add(res)
	}
	if err := <-readErr; err != nil {
		return nil, err
	}
	agg.fill(cr)
	if check != nil {
		if check.Available {
			check.Client = agg.rawFailing
			n, err := coll.CountDocuments(ctx, bson.D{{Key: "$nor", Value: bson.A{bson.D{{Key: "$jsonSchema", Value: schemaDoc}}}}})
			if err != nil {
				check.Available, check.Reason = false, err.Error()
			} else {
				check.Server, check.Agrees = n, n == check.Client
			}
		}
		cr.ServerCheck = check
	}
	return cr, nil
}

// serverCanCount tries a $jsonSchema query on the collection; nil when the
// report is sampled (the server would count everything).
func (r *Runner) serverCanCount(ctx context.Context, coll *mongo.Collection, schema bson.D, opts ReportOptions) *ServerCheck {
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
		return &ServerCheck{Reason: "the server has no $jsonSchema queries: " + err.Error()}
	}
	return &ServerCheck{Reason: err.Error()}
}

// scan reads the documents with one cursor (a sample: the first N in _id
// order), sending copies to out. It only reads, so a long-open cursor is
// harmless; progress is reported every ChunkSize documents.
func (r *Runner) scan(ctx context.Context, coll *mongo.Collection, opts ReportOptions, total int64, out chan<- bson.Raw) error {
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

func (r *Runner) checkDocument(coll string, schema *validator.Schema, raw bson.Raw, rawCheck bool) (res docResult) {
	defer func() {
		if res.upgrade != nil || len(res.failures) > 0 {
			res.id = idOf(raw) // only failing documents need a printable id
		}
	}()
	reg := r.registry
	if rawCheck {
		res.rawFails = len(schema.Validate(raw)) > 0
	}
	up, _, err := reg.UpgradeRaw(coll, raw)
	if err != nil {
		var verr *version.VersionError
		if errors.As(err, &verr) {
			res.invalid = versionText(raw, reg.Field())
		}
		res.upgrade = err
		return res
	}
	// Validation reads raw BSON: a current document is never decoded.
	res.failures = schema.Validate(up)
	// The version counted is the stored one.
	if v, ok := reg.VersionOfRaw(raw); ok {
		res.version = v
	}
	return res
}

func idOf(raw bson.Raw) string {
	rv, err := raw.LookupErr("_id")
	if err != nil {
		return "(no _id)"
	}
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: rv}}, false, false)
	if err != nil {
		return rv.String()
	}
	s := string(b)
	return s[len(`{"v":`) : len(s)-1]
}

func versionText(raw bson.Raw, field string) string {
	rv, err := raw.LookupErr(field)
	if err != nil {
		return ""
	}
	return rv.String()
}

// aggregate folds document results into bounded totals: memory does not
// grow with the number of documents.
type aggregate struct {
	versions   map[int64]int64
	invalid    map[string]int64
	failing    int64
	rawFailing int64
	groups     map[[2]string]*FailureGroup
	upgrades   map[string]*FailureGroup
	scanned    int64
}

func newAggregate() *aggregate {
	return &aggregate{versions: map[int64]int64{}, invalid: map[string]int64{}, groups: map[[2]string]*FailureGroup{}, upgrades: map[string]*FailureGroup{}}
}

func (a *aggregate) add(res docResult) {
	a.scanned++
	switch {
	case res.invalid != "":
		a.invalid[res.invalid]++
	default:
		a.versions[res.version]++
	}
	if res.rawFails {
		a.rawFailing++
	}
	if res.upgrade != nil {
		a.failing++
		msg := res.upgrade.Error()
		var ue *version.UpgradeError
		if errors.As(res.upgrade, &ue) {
			msg = fmt.Sprintf("%s step %d (%s): %v", ue.File, ue.Step, ue.Op, ue.Err)
		}
		g := a.upgrades[msg]
		if g == nil {
			g = &FailureGroup{Rule: "upgrade", Message: msg}
			a.upgrades[msg] = g
		}
		g.add(res.id)
		return
	}
	if len(res.failures) == 0 {
		return
	}
	a.failing++
	for _, f := range res.failures {
		key := [2]string{f.Path, f.Rule}
		g := a.groups[key]
		if g == nil {
			g = &FailureGroup{Path: f.Path, Rule: f.Rule, Message: f.Message}
			a.groups[key] = g
		}
		g.add(res.id)
	}
}

// add counts a document and keeps the smallest MaxExampleIDs ids (results
// arrive out of order from the workers; sorting keeps reports stable).
func (g *FailureGroup) add(id string) {
	g.Count++
	g.ExampleIDs = append(g.ExampleIDs, id)
	if len(g.ExampleIDs) > 4*MaxExampleIDs {
		g.trim()
	}
}

func (g *FailureGroup) trim() {
	sort.Strings(g.ExampleIDs)
	if len(g.ExampleIDs) > MaxExampleIDs {
		g.ExampleIDs = g.ExampleIDs[:MaxExampleIDs]
	}
}

func (a *aggregate) fill(cr *CollectionReport) {
	cr.Scanned, cr.Failing = a.scanned, a.failing
	for v, n := range a.versions {
		cr.Versions = append(cr.Versions, VersionCount{Version: v, Count: n})
	}
	for s, n := range a.invalid {
		cr.Versions = append(cr.Versions, VersionCount{Invalid: s, Count: n})
	}
	sort.Slice(cr.Versions, func(i, j int) bool {
		if cr.Versions[i].Invalid != cr.Versions[j].Invalid {
			return cr.Versions[i].Invalid < cr.Versions[j].Invalid
		}
		return cr.Versions[i].Version < cr.Versions[j].Version
	})
	for _, g := range a.groups {
		g.trim()
		cr.Groups = append(cr.Groups, *g)
	}
	sort.Slice(cr.Groups, func(i, j int) bool {
		if cr.Groups[i].Count != cr.Groups[j].Count {
			return cr.Groups[i].Count > cr.Groups[j].Count
		}
		if cr.Groups[i].Path != cr.Groups[j].Path {
			return cr.Groups[i].Path < cr.Groups[j].Path
		}
		return cr.Groups[i].Rule < cr.Groups[j].Rule
	})
	for _, g := range a.upgrades {
		g.trim()
		cr.UpgradeErrors = append(cr.UpgradeErrors, *g)
	}
	sort.Slice(cr.UpgradeErrors, func(i, j int) bool { return cr.UpgradeErrors[i].Message < cr.UpgradeErrors[j].Message })
}
