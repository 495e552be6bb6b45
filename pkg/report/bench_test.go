package report_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/fixtures"
	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/report"
)

var loadOrders = fixtures.LoadOrders

// BenchmarkReportEndToEnd compares a full report of 2,000 orders on the
// sandbox with a plain cursor scan that decodes the same documents and does
// nothing else. The server dominates both; the ratio shows what the
// report adds.
func BenchmarkReportEndToEnd(b *testing.B) {
	ctx := context.Background()
	db := sandboxtest.Database(b, "app")
	const n = 2000
	loadOrders(b, db, n)
	rp := newReporter(b, db, samples(b))
	b.Run("mongomig", func(b *testing.B) {
		for b.Loop() {
			rep, err := rp.Validate(ctx, report.Options{Collections: []string{"orders"}})
			if err != nil || rep.Collections[0].Scanned != n || rep.Collections[0].Failing != n/100 {
				b.Fatalf("%+v %v", rep, err)
			}
		}
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
	})
	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
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
				b.Fatalf("scanned %d", count)
			}
		}
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
	})
}

// BenchmarkReportMemory reports the peak heap during a full report of 10k
// and of 200k documents: it must not grow with the collection. (The
// sandbox runs in the same process, so its own heap is included.)
func BenchmarkReportMemory(b *testing.B) {
	for _, n := range []int{10_000, 200_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			ctx := context.Background()
			db := sandboxtest.Database(b, "app")
			loadOrders(b, db, n)
			rp := newReporter(b, db, samples(b))
			var peak atomic.Uint64
			for b.Loop() {
				runtime.GC()
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
				if _, err := rp.Validate(ctx, report.Options{Collections: []string{"orders"}}); err != nil {
					b.Fatal(err)
				}
				close(stop)
				wg.Wait()
			}
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
		})
	}
}
