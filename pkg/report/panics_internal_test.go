package report

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestStartCheckersRecoversAPanic: a document check that panics (a bug
// in the validator, say) does not end the process from a report's checker
// goroutine: the other documents are still checked, the reader is never
// blocked, and wait returns the panic as a *PanicError.
func TestStartCheckersRecoversAPanic(t *testing.T) {
	docs := make(chan bson.Raw)
	results := make(chan docResult, 100)
	wait := startCheckers(2, docs, results, "a check", func(raw bson.Raw) docResult {
		if len(raw) == 13 {
			panic("bad document")
		}
		return docResult{}
	})
	for i := 0; i < 20; i++ {
		doc, _ := bson.Marshal(bson.D{{Key: "i", Value: int32(i)}}) // 12 bytes
		if i == 7 {
			doc, _ = bson.Marshal(bson.D{{Key: "ii", Value: int32(i)}}) // 13
		}
		docs <- doc // blocks forever if no checker is left
	}
	close(docs)
	err := wait()
	close(results)
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Where != "a check" || pe.Value != "bad document" {
		t.Fatalf("wait() = %v, want the panic", err)
	}
	if n := len(results); n != 19 {
		t.Fatalf("%d results, want the 19 other documents", n)
	}
}
