package integrity_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/integrity"
	"github.com/mongomig/mongomig/pkg/migration"
)

const benchRules = "collections:\n  students:\n    copies:\n      - {via: classes._id, mode: mirror, fields: {credits: credits}}\n    references:\n      - {path: classes._id, to: classes}\n"

// benchSchool inserts n students, each taking one of 100 classes (4
// credits) with a name, a grade list and the class embedded; every 10th
// student's credits are behind (3).
func benchSchool(b *testing.B, db *mongo.Database, n int) {
	ctx := context.Background()
	var cls []any
	for i := 0; i < 100; i++ {
		cls = append(cls, bson.D{{Key: "_id", Value: fmt.Sprint("c", i)}, {Key: "name", Value: fmt.Sprint("Class ", i)}, {Key: "credits", Value: int32(4)}})
	}
	if _, err := db.Collection("classes").InsertMany(ctx, cls); err != nil {
		b.Fatal(err)
	}
	for from := 0; from < n; from += 10000 {
		var docs []any
		for i := from; i < min(n, from+10000); i++ {
			docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "name", Value: fmt.Sprint("student ", i)}, {Key: "grades", Value: bson.A{int32(12), int32(15), int32(9)}},
				{Key: "classes", Value: bson.A{bson.D{{Key: "_id", Value: fmt.Sprint("c", i%100)}, {Key: "credits", Value: int32(4)}}}}})
		}
		if _, err := db.Collection("students").InsertMany(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
	putBehind(b, db)
}

// putBehind puts every 10th student's credits behind again.
func putBehind(b *testing.B, db *mongo.Database) {
	b.Helper()
	if _, err := db.Collection("students").UpdateMany(context.Background(), bson.D{{Key: "_id", Value: bson.D{{Key: "$mod", Value: bson.A{10, 0}}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "classes.0.credits", Value: int32(3)}}}}); err != nil {
		b.Fatal(err)
	}
}

func benchMigrations(b *testing.B) []*migration.Migration {
	m, err := migration.Parse("0001_r.yaml", []byte(benchRules))
	if err != nil {
		b.Fatal(err)
	}
	return []*migration.Migration{m}
}

// benchRepair compares repair (with leases, as the command runs it) with
// the hand-written guarded fixer on n students, in the same run. Compare
// docs/s (students read per second); no threshold.
func benchRepair(b *testing.B, db *mongo.Database, n int) {
	ctx := context.Background()
	benchSchool(b, db, n)
	b.Run("repair/mongomig", func(b *testing.B) {
		c, err := integrity.New(db, benchMigrations(b), integrity.Options{Leases: owned{db, "bench"}})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			putBehind(b, db)
			b.StartTimer()
			rep, err := c.Repair(ctx, false)
			if err != nil || rep.Fixed != int64(n/10) {
				b.Fatalf("%v, fixed %d", err, rep.Fixed)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	})
	b.Run("repair/baseline", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			putBehind(b, db)
			b.StartTimer()
			if fixed, err := handFixer(ctx, db); err != nil || fixed != int64(n/10) {
				b.Fatalf("%v, fixed %d", err, fixed)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	})
}

// handFixer is the fastest correct fixer a good engineer would write by
// hand with the same guarantees: the students in _id order, 500 at a time
// (memory bounded by the batch), the credits of their classes with one
// $in per batch (the join; the classes are few, but a general fixer
// cannot assume they fit in memory), and one unordered bulk write per
// batch of updates guarded on the array as read, so a concurrent edit is
// never erased; the same join finds the dangling references the
// reference rule reports. (It does not re-check a document whose guard missed; a
// missed guard is a value the next run fixes.)
func handFixer(ctx context.Context, db *mongo.Database) (int64, error) {
	students := db.Collection("students")
	cur, err := students.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).
		SetProjection(bson.D{{Key: "classes", Value: 1}}).SetBatchSize(500))
	if err != nil {
		return 0, err
	}
	defer cur.Close(ctx)
	var fixed, dangling int64
	batch := make([]bson.Raw, 0, 500)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		ids := bson.A{}
		for _, d := range batch {
			vals, _ := d.Lookup("classes").Array().Values()
			for _, v := range vals {
				ids = append(ids, v.Document().Lookup("_id"))
			}
		}
		ccur, err := db.Collection("classes").Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, options.Find().SetProjection(bson.D{{Key: "credits", Value: 1}}))
		if err != nil {
			return err
		}
		credits := map[string]bson.RawValue{}
		for ccur.Next(ctx) {
			credits[ccur.Current.Lookup("_id").StringValue()] = bson.RawValue{Type: ccur.Current.Lookup("credits").Type, Value: append([]byte(nil), ccur.Current.Lookup("credits").Value...)}
		}
		if err := ccur.Close(ctx); err != nil {
			return err
		}
		var models []mongo.WriteModel
		for _, d := range batch {
			arr := d.Lookup("classes")
			vals, _ := arr.Array().Values()
			for j, v := range vals {
				want, ok := credits[v.Document().Lookup("_id").StringValue()]
				if !ok {
					dangling++ // what the reference rule reports: found by the same join
				}
				if got := v.Document().Lookup("credits"); ok && !got.Equal(want) {
					models = append(models, mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: d.Lookup("_id")}, {Key: "classes", Value: arr}}).
						SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: fmt.Sprintf("classes.%d.credits", j), Value: want}}}}))
				}
			}
		}
		batch = batch[:0]
		if len(models) == 0 {
			return nil
		}
		res, err := db.Collection("students").BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
		if err != nil {
			return err
		}
		fixed += res.ModifiedCount
		return nil
	}
	for cur.Next(ctx) {
		batch = append(batch, append(bson.Raw(nil), cur.Current...))
		if len(batch) == 500 {
			if err := flush(); err != nil {
				return fixed, err
			}
		}
	}
	if err := cur.Err(); err != nil {
		return fixed, err
	}
	if err := flush(); err != nil || dangling > 0 {
		return fixed, fmt.Errorf("%d dangling, %v", dangling, err)
	}
	return fixed, nil
}

func BenchmarkRepair(b *testing.B) { benchRepair(b, sandboxtest.Database(b, "integrity"), 2000) }

func BenchmarkRepairMongoDB(b *testing.B) {
	benchRepair(b, sandboxtest.MongoDB(b, "integrity_bench_repair", "a benchmark of the second server"), 20000)
}

// BenchmarkIntegrityMemoryMongoDB reports the peak heap of a check and a
// repair of 20,000 and 200,000 students on the second server (an
// external process: the heap is mongomig's alone), sampled every 2 ms
// after a GC. Flat is the target: the batch, not the collection, bounds
// it.
func BenchmarkIntegrityMemoryMongoDB(b *testing.B) {
	for _, n := range []int{20000, 200000} {
		db := sandboxtest.MongoDB(b, fmt.Sprint("integrity_bench_mem_", n), "a benchmark of the second server")
		benchSchool(b, db, n)
		c, err := integrity.New(db, benchMigrations(b), integrity.Options{Leases: owned{db, "bench"}})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.Run(fmt.Sprintf("check/%d", n), func(b *testing.B) {
			peak := peakHeap(b, func() error { _, err := c.Check(ctx); return err })
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
		b.Run(fmt.Sprintf("repair/%d", n), func(b *testing.B) {
			peak := peakHeap(b, func() error {
				b.StopTimer()
				putBehind(b, db)
				b.StartTimer()
				_, err := c.Repair(ctx, false)
				return err
			})
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

// peakHeap runs fn b.N times and returns the largest HeapInuse sampled.
func peakHeap(b *testing.B, fn func() error) uint64 {
	var peak uint64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		}()
		err := fn()
		close(stop)
		wg.Wait()
		if err != nil {
			b.Fatal(err)
		}
	}
	return peak
}
