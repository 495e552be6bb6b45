// Command benchratio reads `go test -bench` output and prints, for every
// benchmark with an X/baseline sub-benchmark, the medians of each of its
// siblings (X/mongomig printed as X, others as X/name) and of the
// baseline, and their ratio; an X/workersN sibling is also compared with
// X/mongomig (one worker). Ratios measured in one run are what mongomig's
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
	// workersN names a sibling compared with mongomig (one worker) too.
	workersN = regexp.MustCompile(`^workers\d+$`)
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
	fmt.Println("ratio = time / the reference's time per operation (below 1: faster than the reference)")
	fmt.Printf("%-40s %12s %12s %8s %10s %10s\n", "benchmark", "time", "reference", "ratio", "allocs", "ref allocs")
	row := func(label string, m, b *sample) {
		fmt.Printf("%-40s %9.1f ns %9.1f ns %7.2fx %10.0f %10.0f\n", label, median(m.ns), median(b.ns), median(m.ns)/median(b.ns), median(m.allocs), median(b.allocs))
	}
	for _, name := range order {
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			continue
		}
		base, prog := name[:i], name[i+1:]
		b := samples[base+"/baseline"]
		if prog == "baseline" || b == nil {
			continue
		}
		label := strings.TrimPrefix(base, "Benchmark")
		if prog != "mongomig" {
			label += "/" + prog
		}
		row(label+" vs baseline", samples[name], b)
		if one := samples[base+"/mongomig"]; one != nil && workersN.MatchString(prog) {
			row(label+" vs mongomig", samples[name], one)
		}
	}
}
