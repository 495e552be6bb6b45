package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/inspect"
)

func analyzeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "analyze",
		Usage: "read-only design-risk report: document sizes vs 16 MB, array lengths and growth, sparse fields, mixed types, versions",
		Description: "Reads every document (or --sample N) of each collection once and reports, per collection, BSON\n" +
			"sizes, array lengths and whether they grow with document age, sparse fields, mixed types, nesting,\n" +
			"and the version histogram, with the risks found. Needs no migration file; writes nothing.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "collection", Usage: "analyze only collection `C` (repeatable); default: every collection but system.* and mongomig_*"},
			&cli.Int64Flag{Name: "sample", Usage: "read `N` documents per collection ($sample, or the first N in _id order)", DefaultText: "all"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "report format: text, json or markdown"},
			&cli.StringFlag{Name: "out", Usage: "write the report to `FILE` instead of stdout"},
			&cli.Float64Flag{Name: "size-warn", Value: 0.5, Usage: "fraction of 16 MB from which the largest or p99 document size is a risk"},
			&cli.IntFlag{Name: "array-warn", Value: 100, Usage: "length from which an array at least 10 times its median is a risk"},
			&cli.Float64Flag{Name: "growth-warn", Value: 0.5, Usage: "correlation of an array's length with document age from which it is a risk"},
			&cli.Float64Flag{Name: "sparse-below", Value: 0.1, Usage: "fraction of documents under which a field is listed as sparse"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			opts, err := parseAnalyzeFlags(c, e.g.JSON)
			if err != nil {
				return err
			}
			return e.runAnalyze(c.Context, opts)
		},
	}
}

// analyzeOptions are analyze's parsed flags.
type analyzeOptions struct {
	analyze inspect.AnalyzeOptions
	format  string // text, json or markdown
	out     string // --out FILE ("": stdout)
}

func parseAnalyzeFlags(c *cli.Context, jsonFlag bool) (analyzeOptions, error) {
	o := inspect.AnalyzeOptions{Collections: c.StringSlice("collection"), Sample: c.Int64("sample"),
		SizeWarn: c.Float64("size-warn"), ArrayWarn: c.Int("array-warn"), GrowthWarn: c.Float64("growth-warn"), SparseBelow: c.Float64("sparse-below")}
	format := c.String("format")
	if jsonFlag && !c.IsSet("format") {
		format = "json"
	}
	switch {
	case o.Sample < 0:
		return analyzeOptions{}, usageError(fmt.Errorf("--sample %d: give a positive number of documents", o.Sample))
	case format != "text" && format != "json" && format != "markdown":
		return analyzeOptions{}, usageError(fmt.Errorf("unknown --format %q: use text, json or markdown", format))
	case o.SizeWarn <= 0 || o.SizeWarn > 1, o.SparseBelow <= 0 || o.SparseBelow > 1:
		return analyzeOptions{}, usageError(fmt.Errorf("--size-warn and --sparse-below are fractions: give a number above 0 and at most 1, such as 0.5"))
	case o.GrowthWarn <= 0 || o.GrowthWarn > 1:
		return analyzeOptions{}, usageError(fmt.Errorf("--growth-warn %g: give a correlation above 0 and at most 1, such as 0.5", o.GrowthWarn))
	case o.ArrayWarn <= 0:
		return analyzeOptions{}, usageError(fmt.Errorf("--array-warn %d: give a positive length", o.ArrayWarn))
	}
	return analyzeOptions{analyze: o, format: format, out: c.String("out")}, nil
}

func (e *env) runAnalyze(ctx context.Context, ao analyzeOptions) error {
	opts, format, out := ao.analyze, ao.format, ao.out
	db, closeDB, err := e.connect(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	opts.Progress = e.progress()
	a, err := inspect.Analyze(ctx, db, opts)
	if err != nil {
		return err
	}
	for _, w := range a.Warnings {
		e.out.warnf("%s", w)
	}
	w := e.out.out
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		defer f.Close()
		w = f
	}
	switch format {
	case "json":
		o := *e.out
		o.out = w
		return o.writeJSON(a)
	case "markdown":
		return writeAnalysisMarkdown(w, a)
	}
	return writeAnalysisText(w, a)
}

func writeAnalysisText(w io.Writer, a *inspect.Analysis) error {
	fmt.Fprintf(w, "analysis of database %s: %s in %s\n", a.Database, count(a.Risks, "risk"), count(len(a.Collections), "collection"))
	for _, c := range a.Collections {
		fmt.Fprintf(w, "\n%s  %s  size p50 %s, p99 %s, max %s  depth %d  fields max %d, mean %.1f\n",
			display(c.Collection), readLabel(c), bytesLabel(c.Size.P50), bytesLabel(c.Size.P99), bytesLabel(c.Size.Max), c.MaxDepth, c.MaxFields, c.MeanFields)
		for _, line := range analysisLines(c) {
			fmt.Fprintf(w, "  %-9s %s\n", line[0], display(line[1]))
		}
		for _, r := range c.Risks {
			fmt.Fprintf(w, "  RISK %s: %s\n", r.Kind, display(r.Message))
		}
	}
	return nil
}

func writeAnalysisMarkdown(w io.Writer, a *inspect.Analysis) error {
	fmt.Fprintf(w, "# Analysis of database %s\n\n%s in %s.\n", a.Database, count(a.Risks, "risk"), count(len(a.Collections), "collection"))
	for _, c := range a.Collections {
		fmt.Fprintf(w, "\n## %s\n\n| measure | value |\n|---|---|\n", display(c.Collection))
		fmt.Fprintf(w, "| documents | %s |\n| size | p50 %s, p99 %s, max %s |\n| depth, fields | %d; max %d, mean %.1f |\n",
			readLabel(c), bytesLabel(c.Size.P50), bytesLabel(c.Size.P99), bytesLabel(c.Size.Max), c.MaxDepth, c.MaxFields, c.MeanFields)
		for _, line := range analysisLines(c) {
			fmt.Fprintf(w, "| %s | %s |\n", line[0], strings.ReplaceAll(display(line[1]), "|", `\|`))
		}
		if len(c.Risks) > 0 {
			fmt.Fprintln(w)
		}
		for _, r := range c.Risks {
			fmt.Fprintf(w, "- **%s**: %s\n", r.Kind, display(r.Message))
		}
	}
	return nil
}

// analysisLines are the label/value lines of a collection's measurements.
func analysisLines(c *inspect.CollectionAnalysis) [][2]string {
	var lines [][2]string
	var vs []string
	for _, v := range c.Versions {
		if v.Invalid != "" {
			vs = append(vs, fmt.Sprintf("invalid %s: %d", v.Invalid, v.Count))
		} else {
			vs = append(vs, fmt.Sprintf("v%d: %d", v.Version, v.Count))
		}
	}
	lines = append(lines, [2]string{"versions", strings.Join(vs, ", ")})
	var big []string
	for _, d := range c.Size.Largest {
		big = append(big, fmt.Sprintf("%s %s", d.ID, bytesLabel(d.Bytes)))
	}
	if len(big) > 0 {
		lines = append(lines, [2]string{"largest", strings.Join(big, ", ")})
	}
	for _, ar := range c.Arrays {
		s := fmt.Sprintf("%s: length p50 %d, p99 %d, max %d", ar.Path, ar.P50, ar.P99, ar.Max)
		if ar.AgeCorrelation != nil {
			s += fmt.Sprintf(", correlation with age %.2f", *ar.AgeCorrelation)
		}
		if ar.AgeRankCorrelation != nil {
			s += fmt.Sprintf(", rank correlation %.2f", *ar.AgeRankCorrelation)
		}
		lines = append(lines, [2]string{"array", s})
	}
	for _, sp := range c.Sparse {
		lines = append(lines, [2]string{"sparse", fmt.Sprintf("%s: %.1f%% (%d/%d)", sp.Path, sp.Percent, sp.Present, sp.Of)})
	}
	for _, m := range c.MixedTypes {
		lines = append(lines, [2]string{"mixed", fmt.Sprintf("%s: %s", m.Path, describeMixed(m))})
	}
	return lines
}

func readLabel(c *inspect.CollectionAnalysis) string {
	switch c.Read {
	case inspect.ReadSample:
		return fmt.Sprintf("%d sampled of ~%d", c.Documents, c.Total)
	case inspect.ReadFirst:
		return fmt.Sprintf("first %d of ~%d", c.Documents, c.Total)
	}
	return count(c.Documents, "document")
}

func bytesLabel(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
