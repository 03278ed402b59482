package metrics

import (
	"math"
	"sort"
)

// Jain returns Jain's fairness index (Σx)²/(n·Σx²) of xs; 1 means equal
// shares, 1/n means one value takes everything. It is NaN for no values or
// all zeros.
func Jain(xs []float64) float64 {
	var sum, sq float64
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	if len(xs) == 0 || sq == 0 {
		return math.NaN()
	}
	return sum * sum / (float64(len(xs)) * sq)
}

// Percentile returns the p-th percentile (0–100) of sorted values by the
// nearest-rank method; NaN when there are none.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// sortedCopy returns float32 samples as sorted float64s.
func sortedCopy(xs []float32) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	sort.Float64s(out)
	return out
}

// round keeps n significant decimals, so summaries stay readable; NaN and
// infinities become 0 (JSON cannot carry them).
func round(x float64, decimals int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	p := math.Pow(10, float64(decimals))
	return math.Round(x*p) / p
}
