package integrity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// Rule kinds.
const (
	KindReference = "reference"
	KindCopy      = "copy"
	KindAggregate = "aggregate"
	KindCounter   = "counter"
)

// Problems a finding names.
const (
	// ProblemDangling: the reference names no document.
	ProblemDangling = "dangling"
	// ProblemDiffers: a mirror or an aggregate holds another value than
	// its source.
	ProblemDiffers = "differs"
	// ProblemMissing: a snapshot copy is missing.
	ProblemMissing = "missing"
	// ProblemType: a snapshot copy's type is not its source's.
	ProblemType = "type"
	// ProblemBehind: a counter is below a value already used.
	ProblemBehind = "behind"
)

// Methods a rule was checked with.
const (
	MethodServer = "server"
	MethodClient = "client"
)

// Finding is one value out of line.
type Finding struct {
	Rule       string `json:"rule"`
	Collection string `json:"collection"`
	// ID is the document's _id, as relaxed Extended JSON.
	ID bsonx.ExtJSON `json:"_id"`
	// Path is where in the document ("classes.1.credits").
	Path    string `json:"path"`
	Problem string `json:"problem"`
	// Stored and Expected are the values, as relaxed Extended JSON;
	// omitted when missing (Expected of a dangling reference: there is
	// no right value).
	Stored   bsonx.ExtJSON `json:"stored,omitempty"`
	Expected bsonx.ExtJSON `json:"expected,omitempty"`
	// ExpectedType is the type class a snapshot must keep (problem
	// type): "number", "string", ...
	ExpectedType string `json:"expectedType,omitempty"`

	fix *fix
	id  bson.RawValue
}

// RuleResult is one rule's count.
type RuleResult struct {
	Rule       string `json:"rule"`
	Kind       string `json:"kind"`
	Collection string `json:"collection"`
	// Checked is how many documents the rule read (of Collection).
	Checked   int64 `json:"checked"`
	OutOfLine int64 `json:"outOfLine"`
	// Method is server (a $lookup or $group) or client (batched joins).
	Method string `json:"method"`
	// File is the migration file declaring the rule.
	File string `json:"file"`
}

// Report is the result of [Checker.Check].
type Report struct {
	Database  string       `json:"database"`
	Rules     []RuleResult `json:"rules"`
	OutOfLine int64        `json:"outOfLine"`
	// Findings are the values out of line, per rule in rule order, at
	// most Options.MaxFindings (Truncated says when some were left out;
	// the counts are complete).
	Findings  []Finding `json:"findings"`
	Truncated bool      `json:"truncated,omitempty"`
}

// Options configure a check.
type Options struct {
	// Collections restricts the check to the rules of these collections.
	Collections []string
	// BatchSize is how many documents a client-side join holds (default
	// 500).
	BatchSize int
	// MaxFindings bounds the findings kept (default 1000); 0 keeps the
	// default, -1 keeps all.
	MaxFindings int
	// ClientOnly joins on the client even where the server could.
	ClientOnly bool
	// Repair's: Rate bounds a process's writes per second (0:
	// unbounded); Progress, when set, is told each rule's count as it
	// finishes; Leases, when set, splits each rule into _id ranges, each
	// walked under its own lease, so repairs in several processes share
	// the work (see ranges.go), waiting at most LeaseWait for the
	// database's lease ([RepairLease]) to plan; Workers is how many
	// ranges one process walks at once (default 1).
	Rate      float64
	Progress  func(RuleProgress)
	Leases    lease.Acquirer
	LeaseWait time.Duration
	Workers   int
	// Resumable: Check stores its progress and goes on from a stopped
	// one's (checkresume.go); it needs Leases (it holds [CheckLease]) and
	// a bound on the findings kept.
	Resumable bool
}

// Checker checks and repairs the integrity rules of a set of migrations.
type Checker struct {
	db     *mongo.Database
	rules  []rule
	passes []*pass // repair's: the rules by collection (pass.go)
	opts   Options

	bulkOnce sync.Once
	bulk     int // fixes per bulk write (bulkSize)
}

// New returns a checker for the rules in force after ms. It refuses a
// copy whose via names no reference (lint reports it too) and an unknown
// collection in opts.Collections.
func New(db *mongo.Database, ms []*migration.Migration, opts Options) (*Checker, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 500
	}
	if opts.MaxFindings == 0 {
		opts.MaxFindings = 1000
	}
	if opts.Resumable && (opts.Leases == nil || opts.MaxFindings < 0) {
		return nil, errors.New("a resumable check needs leases and a bound on the findings it keeps (it stores them)")
	}
	c := &Checker{db: db, opts: opts}
	all := migration.IntegrityRules(ms)
	var names []string
	for _, in := range all {
		names = append(names, in.Collection)
	}
	for _, name := range opts.Collections {
		if !slices.Contains(names, name) {
			return nil, fmt.Errorf("%w %q: no migration declares integrity rules on it (%s)", version.ErrUnknownCollection, name, bsonx.KnownList(names))
		}
	}
	for _, in := range all {
		if len(opts.Collections) > 0 && !slices.Contains(opts.Collections, in.Collection) {
			continue
		}
		rs, err := rulesOf(in)
		if err != nil {
			return nil, err
		}
		c.rules = append(c.rules, rs...)
	}
	c.passes = passesOf(c.rules)
	return c, nil
}

// Rules lists the rules' names, in check order.
func (c *Checker) Rules() []string {
	var out []string
	for _, r := range c.rules {
		out = append(out, r.info().Rule)
	}
	return out
}

// rule is one declared rule the checker runs.
type rule interface {
	info() RuleResult
	// scan reads the documents of filter and emits the findings.
	scan(ctx context.Context, c *Checker, filter bson.D, emit func(Finding)) (checked int64, method string, err error)
}

func rulesOf(in *migration.Integrity) ([]rule, error) {
	var out []rule
	for _, r := range in.References {
		out = append(out, &refRule{coll: in.Collection, ref: r, file: in.File["references"]})
	}
	for _, cp := range in.Copies {
		ref, ok := in.Reference(cp.Via)
		if !ok {
			return nil, fmt.Errorf("%s:%d: collection %q: copy via %q: no reference is declared at %q", in.File["copies"], cp.Pos.Line, in.Collection, cp.Via, cp.Via)
		}
		for _, f := range cp.Fields {
			r := &copyRule{coll: in.Collection, cp: cp, field: f, to: ref.To, file: in.File["copies"]}
			r.rule = r.info().Rule
			out = append(out, r)
		}
	}
	for _, a := range in.Aggregates {
		out = append(out, &aggRule{coll: in.Collection, agg: a, file: in.File["aggregates"]})
	}
	for _, k := range in.Counters {
		out = append(out, &counterRule{coll: in.Collection, ctr: k, file: in.File["counters"]})
	}
	return out, nil
}

// Check runs every rule and reports the values out of line.
func (c *Checker) Check(ctx context.Context) (*Report, error) {
	if c.opts.Resumable {
		return c.checkResumable(ctx)
	}
	rep := &Report{Database: c.db.Name(), Rules: []RuleResult{}, Findings: []Finding{}}
	for _, r := range c.rules {
		res := r.info()
		checked, method, err := r.scan(ctx, c, bson.D{}, func(f Finding) {
			res.OutOfLine++
			if c.opts.MaxFindings < 0 || len(rep.Findings) < c.opts.MaxFindings {
				rep.Findings = append(rep.Findings, f)
			} else {
				rep.Truncated = true
			}
		})
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", res.Rule, err)
		}
		res.Checked, res.Method = checked, method
		rep.OutOfLine += res.OutOfLine
		rep.Rules = append(rep.Rules, res)
	}
	return rep, nil
}

// OutOfLineError is what a check that found values out of line returns
// alongside its report.
type OutOfLineError struct{ Count int64 }

func (e *OutOfLineError) Error() string {
	return fmt.Sprintf("%d values out of line", e.Count)
}

// Err is the report's *OutOfLineError, or nil when everything is in line.
func (r *Report) Err() error {
	if r.OutOfLine == 0 {
		return nil
	}
	return &OutOfLineError{Count: r.OutOfLine}
}

// notSupported reports whether err is the server's "not implemented"
// answer to a pipeline stage, after which the check joins client-side.
func notSupported(err error) bool {
	var se mongo.ServerError
	// NotImplemented 238, CommandNotFound 59; FerretDB v1 answers an
	// unknown stage or accumulator with 238 too.
	return errors.As(err, &se) && (se.HasErrorCode(238) || se.HasErrorCode(59))
}

// batches reads the documents of filter from coll in _id order, with
// projection, and hands them to fn batch by batch.
func (c *Checker) batches(ctx context.Context, coll string, filter, projection bson.D, fn func([]bson.Raw) error) (int64, error) {
	cur, err := c.db.Collection(coll).Find(ctx, filter, findOpts(projection, c.opts.BatchSize))
	if err != nil {
		return 0, err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	var n int64
	batch := make([]bson.Raw, 0, c.opts.BatchSize)
	for cur.Next(ctx) {
		batch = append(batch, slices.Clone(cur.Current))
		n++
		if len(batch) == c.opts.BatchSize {
			if err := fn(batch); err != nil {
				return n, err
			}
			batch = batch[:0]
		}
	}
	if err := cur.Err(); err != nil {
		return n, err
	}
	if len(batch) > 0 {
		return n, fn(batch)
	}
	return n, nil
}

// fetch returns the documents of coll whose _id is one of ids, by key.
func (c *Checker) fetch(ctx context.Context, coll string, ids []bson.RawValue, projection bson.D) (map[string]bson.Raw, error) {
	out := map[string]bson.Raw{}
	if len(ids) == 0 {
		return out, nil
	}
	in := make(bson.A, len(ids))
	for i, id := range ids {
		in[i] = id
	}
	cur, err := c.db.Collection(coll).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: in}}}}, options.Find().SetProjection(projection).SetBatchSize(int32(min(len(ids)+1, 10000))))
	if err != nil {
		return nil, err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	for cur.Next(ctx) {
		out[key(cur.Current.Lookup("_id"))] = slices.Clone(cur.Current)
	}
	return out, cur.Err()
}
