// Command benchratio reads `go test -bench` output and prints, for every
// benchmark with X/mongomig and X/baseline sub-benchmarks, the medians of
// both and their ratio. Ratios measured in one run are what mongomig's
// performance claims rest on: these machines are too noisy for absolute
// numbers.
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var (
	line   = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op`)
	bytesR = regexp.MustCompile(`\s([\d.]+) B/op`)
	allocR = regexp.MustCompile(`\s([\d.]+) allocs/op`)
)

type sample struct{ ns, bytes, allocs []float64 }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func main() {
	samples := map[string]*sample{}
	var order []string
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		s := samples[m[1]]
		if s == nil {
			s = &sample{}
			samples[m[1]] = s
			order = append(order, m[1])
		}
		ns, _ := strconv.ParseFloat(m[3], 64)
		s.ns = append(s.ns, ns)
		if bm, am := bytesR.FindStringSubmatch(sc.Text()), allocR.FindStringSubmatch(sc.Text()); bm != nil && am != nil {
			b, _ := strconv.ParseFloat(bm[1], 64)
			a, _ := strconv.ParseFloat(am[1], 64)
			s.bytes, s.allocs = append(s.bytes, b), append(s.allocs, a)
		}
	}
	fmt.Println("ratio = mongomig time / baseline time per operation (below 1: mongomig is faster)")
	fmt.Printf("%-32s %12s %12s %8s %10s %10s\n", "benchmark", "mongomig", "baseline", "ratio", "allocs", "base allocs")
	for _, name := range order {
		base, ok := strings.CutSuffix(name, "/mongomig")
		if !ok {
			continue
		}
		m, b := samples[name], samples[base+"/baseline"]
		if b == nil {
			continue
		}
		ratio := median(m.ns) / median(b.ns)
		fmt.Printf("%-32s %9.1f ns %9.1f ns %7.2fx %10.0f %10.0f\n", strings.TrimPrefix(base, "Benchmark"), median(m.ns), median(b.ns), ratio, median(m.allocs), median(b.allocs))
	}
}
