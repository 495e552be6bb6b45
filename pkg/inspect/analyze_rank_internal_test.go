package inspect

import (
	"math"
	"testing"
)

// TestRankSampleOfALongSeries: past the sample's size the estimate stays
// that of the whole series (a monotonic one: 1), and ties share ranks (a
// series of two values, half each, against its index: sqrt(3)/2).
func TestRankSampleOfALongSeries(t *testing.T) {
	var s rankSample
	for i := range 100_000 {
		s.add(float64(i), math.Exp(float64(i)/10_000))
	}
	if len(s.pairs) != rankSampleSize {
		t.Fatalf("kept %d pairs, want %d", len(s.pairs), rankSampleSize)
	}
	if r, ok := s.r(); !ok || r < 0.9999 {
		t.Errorf("r = %v, %v; want 1", r, ok)
	}
	var ties rankSample
	for i := range 1000 {
		ties.add(float64(i), float64(i/500))
	}
	if r, ok := ties.r(); !ok || math.Abs(r-math.Sqrt(3)/2) > 0.001 {
		t.Errorf("r with ties = %v, %v; want %.4f", r, ok, math.Sqrt(3)/2)
	}
	var flat rankSample
	for i := range 5 {
		flat.add(float64(i), 3)
	}
	if _, ok := flat.r(); ok {
		t.Error("a constant series has a rank correlation")
	}
}
