package inspect_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/inspect"
)

// plainScan is the baseline of the init and analyze benchmarks: the
// fastest correct hand-written program reading the same documents, a
// cursor scan decoding each one.
func plainScan(b *testing.B, db *mongo.Database, n int) {
	ctx := context.Background()
	cur, err := db.Collection("orders").Find(ctx, bson.D{})
	if err != nil {
		b.Fatal(err)
	}
	count := 0
	for cur.Next(ctx) {
		var d bson.D
		if err := cur.Decode(&d); err != nil {
			b.Fatal(err)
		}
		count++
	}
	_ = cur.Close(ctx)
	if count != n {
		b.Fatalf("scanned %d, want %d", count, n)
	}
}

// BenchmarkInferEndToEnd: init's inference of 2,000 orders on the sandbox
// against a plain cursor scan of the same documents, in one run.
func BenchmarkInferEndToEnd(b *testing.B) {
	ctx := context.Background()
	db := sandboxtest.Database(b, "app")
	const n = 2000
	loadOrders(b, db, n)
	b.Run("mongomig", func(b *testing.B) {
		for b.Loop() {
			inf, err := inspect.Infer(ctx, db, inspect.InferOptions{Collections: []string{"orders"}})
			if err != nil || inf.Collections[0].Documents != n {
				b.Fatalf("%+v %v", inf, err)
			}
			if _, err := inf.File("0001_baseline.yaml", inspect.FileOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
	})
	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
			plainScan(b, db, n)
		}
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
	})
}

// BenchmarkAnalyzeEndToEnd: analyze of 2,000 orders on the sandbox against
// a plain cursor scan of the same documents, in one run.
func BenchmarkAnalyzeEndToEnd(b *testing.B) {
	ctx := context.Background()
	db := sandboxtest.Database(b, "app")
	const n = 2000
	loadOrders(b, db, n)
	b.Run("mongomig", func(b *testing.B) {
		for b.Loop() {
			a, err := inspect.Analyze(ctx, db, inspect.AnalyzeOptions{Collections: []string{"orders"}})
			if err != nil || a.Collections[0].Documents != n {
				b.Fatalf("%+v %v", a, err)
			}
		}
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
	})
	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
			plainScan(b, db, n)
		}
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
	})
}

// BenchmarkInferMemory reports the peak heap while init infers 20k and
// 200k documents: it must not grow with the collection. (The sandbox runs
// in the same process, so its own heap is included.)
func BenchmarkInferMemory(b *testing.B) {
	for _, n := range []int{20_000, 200_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			ctx := context.Background()
			db := sandboxtest.Database(b, "app")
			loadOrders(b, db, n)
			var peak uint64
			for b.Loop() {
				peak = max(peak, peakHeap(func() {
					inf, err := inspect.Infer(ctx, db, inspect.InferOptions{Collections: []string{"orders"}})
					if err != nil || inf.Collections[0].Documents != int64(n) {
						b.Fatalf("%+v %v", inf, err)
					}
				}))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// peakHeap runs fn and returns the highest HeapAlloc seen meanwhile
// (sampled every 20 ms, after a GC before it starts).
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	return peak.Load()
}
