package inspect

import (
	"math/rand/v2"
	"sort"
)

// rankSampleSize bounds the pairs a rankSample keeps: the rank
// correlation of a uniform sample of this size is within a few hundredths
// of the whole series', and memory stays 32 KiB per array path however
// many documents are read.
const rankSampleSize = 2048

// rankSample estimates Spearman's rank correlation of two series from a
// uniform reservoir sample of their pairs (Vitter's algorithm R). Pearson
// (correlation) measures how linear a relation is; an array whose length
// grows with age monotonically but not linearly (most documents short,
// the oldest far longer) has a rank correlation near 1 and a Pearson
// correlation well below it. The sample is drawn with a fixed seed, so
// the same documents in the same order give the same estimate.
type rankSample struct {
	seen  int64
	pairs [][2]float64
	rng   *rand.Rand
}

func (s *rankSample) add(x, y float64) {
	s.seen++
	if len(s.pairs) < rankSampleSize {
		s.pairs = append(s.pairs, [2]float64{x, y})
		return
	}
	if s.rng == nil {
		s.rng = rand.New(rand.NewPCG(1, 2))
	}
	if j := s.rng.Int64N(s.seen); j < rankSampleSize {
		s.pairs[j] = [2]float64{x, y}
	}
}

// r returns the rank correlation (ties get their average rank), and
// false when it is undefined (fewer than 3 pairs, or a constant series).
func (s *rankSample) r() (float64, bool) {
	if s == nil || len(s.pairs) < 3 {
		return 0, false
	}
	rx, ry := ranks(s.pairs, 0), ranks(s.pairs, 1)
	var c correlation
	for i := range rx {
		c.add(rx[i], ry[i])
	}
	return c.r()
}

// ranks returns the rank of each pair's k-th value, 1 for the smallest,
// tied values sharing the mean of their ranks.
func ranks(pairs [][2]float64, k int) []float64 {
	order := make([]int, len(pairs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return pairs[order[a]][k] < pairs[order[b]][k] })
	out := make([]float64, len(pairs))
	for i := 0; i < len(order); {
		j := i
		for j+1 < len(order) && pairs[order[j+1]][k] == pairs[order[i]][k] {
			j++
		}
		mean := float64(i+j)/2 + 1
		for _, o := range order[i : j+1] {
			out[o] = mean
		}
		i = j + 1
	}
	return out
}
