package inspect

import "fmt"

// minGrowthLength is the longest array below which growth with age is
// not reported: short arrays that vary with age are no risk.
const minGrowthLength = 10

// risks applies the design rules to a collection's measurements.
func risks(ca *CollectionAnalysis, opts AnalyzeOptions) []Risk {
	out := []Risk{}
	limit := opts.SizeWarn * MaxDocumentSize
	if ca.Documents > 0 && (float64(ca.Size.Max) >= limit || float64(ca.Size.P99) >= limit) {
		out = append(out, Risk{Kind: RiskSize, Message: fmt.Sprintf(
			"documents approach the 16 MB limit: largest %s (%.0f%% of 16 MB, _id %s), p99 %s; move what grows into its own collection",
			bytesText(ca.Size.Max), 100*float64(ca.Size.Max)/MaxDocumentSize, ca.Size.Largest[0].ID, bytesText(ca.Size.P99))})
	}
	for _, a := range ca.Arrays {
		if a.Max >= opts.ArrayWarn && a.Max >= 10*max(a.P50, 1) {
			out = append(out, Risk{Kind: RiskArray, Path: a.Path, Message: fmt.Sprintf(
				"array %s: longest %d items, median %d, p99 %d; an array far longer than usual is often unbounded: keep it bounded (maxItems) or move its items to their own collection",
				a.Path, a.Max, a.P50, a.P99)})
		}
		if growing(a, opts.GrowthWarn) && a.Max >= minGrowthLength {
			out = append(out, Risk{Kind: RiskGrowth, Path: a.Path, Message: fmt.Sprintf(
				"array %s grows with document age (%s; longest %d, median %d): older documents keep accumulating items, the sign of an unbounded array",
				a.Path, correlations(a), a.Max, a.P50)})
		}
	}
	for _, m := range ca.MixedTypes {
		out = append(out, Risk{Kind: RiskMixed, Path: m.Path, Message: fmt.Sprintf("field %s has several types: %s", m.Path, typeCounts(m.Types))})
	}
	return out
}

// growing reports whether an array's length follows its document's age
// by either correlation: Pearson's finds a linear growth, the rank
// correlation a monotonic one that is not linear (most arrays short, the
// oldest far longer), which Pearson's puts well under the threshold.
func growing(a ArrayStats, warn float64) bool {
	return a.AgeCorrelation != nil && *a.AgeCorrelation >= warn ||
		a.AgeRankCorrelation != nil && *a.AgeRankCorrelation >= warn
}

// correlations prints an array's correlations with age.
func correlations(a ArrayStats) string {
	var s string
	if a.AgeCorrelation != nil {
		s = fmt.Sprintf("correlation %.2f", *a.AgeCorrelation)
	}
	if a.AgeRankCorrelation != nil {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("rank correlation %.2f", *a.AgeRankCorrelation)
	}
	return s
}

// bytesText is a size in B, KiB or MiB.
func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
