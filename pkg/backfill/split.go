package backfill

import (
	"context"
	"fmt"

	"github.com/mongomig/mongomig/internal/idsplit"
	"github.com/mongomig/mongomig/pkg/probe"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// The split points of a parallel backfill (see backfillWorkers) come from
// the server where it offers them, without reading the collection:
//
//   - With $sample (MongoDB): quantiles of a sample of the collection's
//     _ids, from one command,
//     aggregate <coll> [{$sample: {size: S}}, {$project: {_id: 1}}, {$sort: {_id: 1}}]
//     with S = splitSamplesPerRange per range. MongoDB answers a first
//     $sample stage whose size is at most 5% of a collection of more than
//     100 documents from a random cursor of the storage engine, reading
//     about S documents; any other $sample is a top-S sort over a
//     collection scan, holding S documents
//     (src/mongo/db/pipeline/pipeline_d.cpp, createRandomCursorExecutor;
//     src/mongo/db/pipeline/document_source_sample.cpp). $bucketAuto is not
//     used: it feeds every document to a sorter before the first bucket
//     comes out (src/mongo/db/pipeline/document_source_bucket_auto.cpp,
//     populateSorter), a scan and a sort of N keys held in memory up to the
//     stage's limit, then spilled to disk or refused. The sample is of the
//     whole collection, not of the documents below the target (a $match
//     first would turn the random cursor into a scan); on MongoDB a range
//     walk reads its whole _id range through the _id index, so ranges of
//     equal size in documents are ranges of equal work.
//   - Without (FerretDB v1 answers NotImplemented, detected at run time):
//     exact split points, every k-th _id of the documents below the target
//     read in order with an _id-only projection (k from the estimated
//     size, so fewer documents below the target make fewer ranges).
//
// Either way a collection of at most one range's worth of documents is not
// split, and the ranges number about 4 per worker (k = max(Batch,
// count/Workers/4)), so a worker that finishes early takes another; one
// per worker where a range's filter is evaluated by reading the whole
// collection (FerretDB v1, the server without GuardedWrites), since there
// every range costs a collection scan.

// splitSamplesPerRange is the sample size per range: a range's share of
// the sample varies by about 1/sqrt(32), 18%, around its mean.
const splitSamplesPerRange = 32

// splitPoints returns the split points of name's _id space for target and
// says where they came from.
func (r *backfiller) splitPoints(ctx context.Context, name string, target int64, opts Options) (bson.A, string, error) {
	coll := r.db.Collection(name)
	est, err := coll.EstimatedDocumentCount(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("estimate the size of %s: %w", name, err)
	}
	per := rangeSize(est, opts)
	if est <= per {
		return bson.A{}, fmt.Sprintf("one range: about %d documents", est), nil
	}
	ranges := (est + per - 1) / per
	splits, err := sampledSplits(ctx, coll, ranges)
	if err == nil {
		return splits, fmt.Sprintf("quantiles of a $sample of %d _ids", ranges*splitSamplesPerRange), nil
	}
	if !probe.IsNotSupported(err) {
		return nil, "", fmt.Errorf("sample the _ids of %s: %w", name, err)
	}
	refused := probe.ServerMessage(err)
	if splits, err = r.scannedSplits(ctx, coll, target, per); err != nil {
		return nil, "", err
	}
	return splits, fmt.Sprintf("every _id below version %d, read in order (the server has no $sample: %s)", target, refused), nil
}

// rangesPerWorker is the default Options.rangesPerWorker.
func rangesPerWorker(guarded probe.Capability) int {
	if !guarded.Available {
		return 1
	}
	return 4
}

// rangeSize is the number of documents per range for a collection of n.
func rangeSize(n int64, opts Options) int64 {
	return max(int64(opts.Batch), n/int64(max(opts.Workers, 1)*max(opts.rangesPerWorker, 1)), 1)
}

// sampledSplits asks the server for a sample of the _ids, sorted, and
// takes ranges-1 evenly spaced of them.
func sampledSplits(ctx context.Context, coll *mongo.Collection, ranges int64) (bson.A, error) {
	return idsplit.Sampled(ctx, coll, ranges, splitSamplesPerRange)
}

// quantiles returns the ranges-1 elements of sorted that split it into
// ranges parts of equal length, each once.
func quantiles(sorted []bson.RawValue, ranges int64) bson.A { return idsplit.Quantiles(sorted, ranges) }

// scannedSplits reads the _ids below target in order and keeps every
// per-th (per from the collection's estimated size: counting the
// documents below the target would be one more pass).
func (r *backfiller) scannedSplits(ctx context.Context, coll *mongo.Collection, target, per int64) (bson.A, error) {
	return idsplit.Scanned(ctx, coll, r.belowFilter(target), per)
}
