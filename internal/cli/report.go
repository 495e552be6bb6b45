package cli

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/report"
)

// Report formats.
var reportFormats = []string{"text", "json", "markdown", "junit"}

func reportFlags() []cli.Flag {
	return []cli.Flag{
		&cli.Int64Flag{Name: "sample", Usage: "check only the first `N` documents of each collection (_id order)", DefaultText: "all"},
		&cli.StringFlag{Name: "format", Value: "text", Usage: "report format: text, json, markdown or junit"},
		&cli.StringFlag{Name: "out", Usage: "write the report to `FILE` instead of stdout"},
	}
}

// allIDsFlag lists every failing _id; a command that offers it passes
// [reportSettings.options] to pkg/report.
func allIDsFlag() cli.Flag {
	return &cli.BoolFlag{Name: "all-ids", Usage: fmt.Sprintf("list the _id of every failing document, not only the smallest %d of each failure", report.MaxExampleIDs)}
}

// showValuesFlag puts the colliding key values of a predicted unique index
// build in the dry-run report (hidden by default: they are production
// data, and the report is posted where the pull request's author reads
// it).
func showValuesFlag() cli.Flag {
	return &cli.BoolFlag{Name: "show-values", Usage: "show the key values that collide in a predicted unique index build (hidden by default: only counts and _ids, since the report may be posted on a pull request)"}
}

// reportSettings are the parsed report flags.
type reportSettings struct {
	sample     int64
	format     string
	out        string
	allIDs     bool
	showValues bool
}

// options are the report options the flags ask for.
func (s reportSettings) options(progress func(string, int64, int64)) report.Options {
	return report.Options{Sample: s.sample, AllExampleIDs: s.allIDs, ShowKeyValues: s.showValues, Progress: progress}
}

// reporter reports on the session's database against its migration
// files, upgrading documents with the version options the runner has.
func (e *env) reporter(s *session) (*report.Reporter, error) {
	return report.New(s.db, s.runner.Migrations(), e.cfg.VersionOptions...)
}

// parseReportFlags reads and checks the report flags.
func parseReportFlags(c *cli.Context, jsonFlag bool) (reportSettings, error) {
	s := readReportFlags(c, jsonFlag)
	return s, s.check()
}

// readReportFlags reads the report flags without checking them: up checks
// them only for --dry-run, once the files are read.
func readReportFlags(c *cli.Context, jsonFlag bool) reportSettings {
	s := reportSettings{sample: c.Int64("sample"), format: c.String("format"), out: c.String("out"), allIDs: c.Bool("all-ids"), showValues: c.Bool("show-values")}
	if jsonFlag && !c.IsSet("format") {
		s.format = "json"
	}
	return s
}

// check refuses (exit 2) a negative --sample and an unknown --format.
func (s reportSettings) check() error {
	if s.sample < 0 {
		return usageError(fmt.Errorf("--sample %d: give a positive number of documents", s.sample))
	}
	ok := false
	for _, f := range reportFormats {
		ok = ok || f == s.format
	}
	if !ok {
		return usageError(fmt.Errorf("unknown --format %q: use %s", s.format, strings.Join(reportFormats, ", ")))
	}
	return nil
}

// progress renders a one-line progress indicator on stderr when it is a
// terminal, nothing otherwise.
func (e *env) progress() func(coll string, scanned, total int64) {
	if !e.streams.ErrIsTerminal {
		return nil
	}
	return func(coll string, scanned, total int64) {
		pct := 100.0
		if total > 0 {
			pct = 100 * float64(scanned) / float64(total)
		}
		fmt.Fprintf(e.out.err, "\r\033[K%s: %d/%d documents (%.0f%%)", coll, scanned, total, min(pct, 100))
		if scanned >= total {
			fmt.Fprint(e.out.err, "\r\033[K")
		}
	}
}

// writeReport renders rep in the chosen format to stdout or --out.
func (e *env) writeReport(rep *report.Report, s reportSettings) error {
	if s.out == "" {
		return renderReport(e.out.out, e.out.color, rep, s.format)
	}
	if err := writeFileAtomic(s.out, func(w io.Writer) error { return renderReport(w, false, rep, s.format) }); err != nil {
		return fmt.Errorf("--out %s: %w", s.out, err)
	}
	fmt.Fprintf(e.out.err, "report written to %s\n", s.out)
	return nil
}

// renderReport renders rep in format to w.
func renderReport(w io.Writer, color bool, rep *report.Report, format string) error {
	var err error
	switch format {
	case "json":
		o := &output{out: w}
		err = o.writeJSON(rep)
	case "markdown":
		err = renderMarkdown(w, rep)
	case "junit":
		err = renderJUnit(w, rep)
	default:
		o := &output{out: w, color: color}
		renderReportText(o, rep)
	}
	return err
}

// summary is a report's headline: the documents that would fail, then the
// unique index builds that would (a dry run checking no validator says
// so rather than "all documents pass").
func summary(rep *report.Report) string {
	var s string
	switch {
	case len(rep.Collections) == 0 && len(rep.IndexBuilds) > 0:
		s = "no validator to check"
	case rep.Failing == 0:
		s = fmt.Sprintf("all documents pass (%s checked)", count(len(rep.Collections), "collection"))
	default:
		s = fmt.Sprintf("%s would fail (%s checked)", count(rep.Failing, "document"), count(len(rep.Collections), "collection"))
	}
	if n := failingBuilds(rep); n > 0 {
		s += fmt.Sprintf("; %s would fail", count(n, "unique index build"))
	}
	return s
}

func failingBuilds(rep *report.Report) int {
	n := 0
	for _, b := range rep.IndexBuilds {
		if b.Fails() {
			n++
		}
	}
	return n
}

func versionsText(vs []report.VersionCount) string {
	var parts []string
	for _, v := range vs {
		if v.Invalid != "" {
			parts = append(parts, fmt.Sprintf("invalid %s: %d", v.Invalid, v.Count))
		} else {
			parts = append(parts, fmt.Sprintf("v%d: %d", v.Version, v.Count))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// serverCheckText words the server cross-check the same way in every
// format.
func serverCheckText(c *report.ServerCheck) string {
	switch {
	case c == nil:
		return "not run (sampled report)"
	case !c.Available || c.Agrees == nil || c.Server == nil || c.Client == nil:
		if c.Reason == "" {
			return "not available"
		}
		return "not available (" + c.Reason + ")"
	case *c.Agrees:
		return fmt.Sprintf("agrees (%s %s as stored)", count(*c.Server, "document"), verb(*c.Server, "fail", "fails"))
	}
	return fmt.Sprintf("DIFFERS: the server counts %s failing as stored, mongomig %d", count(*c.Server, "document"), *c.Client)
}

func renderReportText(o *output, rep *report.Report) {
	head := o.green(summary(rep))
	if rep.Failing > 0 || failingBuilds(rep) > 0 {
		head = o.red(summary(rep))
	}
	o.printf("%s database %s: %s\n", o.bold("validation report"), rep.Database, head)
	for _, c := range rep.Collections {
		sampled := ""
		if c.Sampled {
			sampled = " (sample)"
		}
		o.printf("\n%s  validator of %04d (%s, %s)  scanned %d%s  versions %s\n", o.bold(c.Collection), c.ValidatorFrom,
			c.ValidationLevel, c.ValidationAction, c.Scanned, sampled, versionsText(c.Versions))
		if c.Failing == 0 {
			o.printf("  %s all documents pass\n", o.green("ok"))
		}
		for _, g := range append(append([]report.FailureGroup(nil), c.UpgradeErrors...), c.Groups...) {
			label := o.red("FAIL")
			if c.ValidationAction == "warn" {
				label = o.yellow("WARN")
			}
			where := g.Path
			if where == "" {
				where = "(document)"
			}
			o.printf("  %s %s  %s  %s: %s\n", label, where, g.Rule, count(g.Count, "document"), g.Message)
			o.printf("       %s %s\n", o.faint("e.g."), strings.Join(g.ExampleIDs, ", "))
		}
		o.printf("  %s %s\n", o.faint("server cross-check:"), serverCheckText(c.ServerCheck))
	}
	renderIndexBuilds(o, rep.IndexBuilds)
}

// renderIndexBuilds prints the predicted unique index builds of a dry run.
func renderIndexBuilds(o *output, builds []report.IndexBuild) {
	if len(builds) == 0 {
		return
	}
	o.printf("\n%s\n", o.bold("unique index builds (on the documents as stored)"))
	for _, b := range builds {
		switch {
		case b.Skipped != "":
			o.printf("  %s %s.%s (%s): %s\n", o.faint("skip"), b.Collection, b.Index, b.File, b.Skipped)
		case b.Fails():
			o.printf("  %s %s.%s (%s): %s\n", o.red("FAIL"), b.Collection, b.Index, b.File, indexBuildResult(b))
			for _, c := range b.Collisions {
				o.printf("       %s %s: %s\n", o.faint("key"), keyText(c), collisionIDs(c, func(id string) string { return id }))
			}
			if more := moreCollidingKeys(b); more != "" {
				o.printf("       %s\n", o.faint(more))
			}
		default:
			o.printf("  %s %s.%s (%s): %s\n", o.green("ok"), b.Collection, b.Index, b.File, indexBuildResult(b))
		}
	}
}

// keyText is a colliding key as the report shows it: its values, or
// "(hidden)" when the report leaves them out (see --show-values).
func keyText(c report.IndexCollision) string {
	if c.Key == "" {
		return "(hidden)"
	}
	return string(c.Key)
}

// collisionIDs words the documents sharing a colliding key: "_ids 1, 98"
// (each written by code), and how many more there are beyond those listed.
func collisionIDs(c report.IndexCollision, code func(string) string) string {
	ids := make([]string, len(c.IDs))
	for i, id := range c.IDs {
		ids[i] = code(string(id))
	}
	text := "_ids " + strings.Join(ids, ", ")
	if n := c.Count - int64(len(c.IDs)); n > 0 {
		text += fmt.Sprintf(" and %d more", n)
	}
	return text
}

// moreCollidingKeys says how many colliding keys a build does not detail,
// "" when it details them all.
func moreCollidingKeys(b report.IndexBuild) string {
	if n := b.CollidingKeys - int64(len(b.Collisions)); n > 0 {
		return "and " + count(n, "more colliding key")
	}
	return ""
}

// collisionAdvice says what fixes a predicted collision: sparse only helps
// the documents lacking the key.
func collisionAdvice(b report.IndexBuild) string {
	switch {
	case b.MissingAsNull == 0:
		return "; every one has the key: fix the data so the keys differ"
	case b.MissingAsNull == b.Duplicates:
		all := fmt.Sprintf("all %d ", b.MissingAsNull)
		if b.MissingAsNull == 1 {
			all = ""
		}
		return fmt.Sprintf(", %slacking the key (indexed as null); add sparse: true or fix the data", all)
	}
	return fmt.Sprintf(", %d of them lacking the key (indexed as null): sparse: true would leave %d colliding; fix the data",
		b.MissingAsNull, b.Duplicates-b.MissingAsNull)
}

func renderMarkdown(w io.Writer, rep *report.Report) error {
	var b strings.Builder
	icon := "✅"
	if rep.WouldReject {
		icon = "❌"
	} else if rep.Failing > 0 {
		icon = "⚠️"
	}
	fmt.Fprintf(&b, "## %s mongomig validation report: %s\n\n", icon, summary(rep))
	fmt.Fprintf(&b, "Database `%s`. Documents are checked after the upgrades they would get.\n", rep.Database)
	if len(rep.Collections) > 0 {
		b.WriteString("\n| collection | validator | level / action | scanned | versions | failing | server cross-check |\n|---|---|---|---|---|---|---|\n")
	}
	for _, c := range rep.Collections {
		fmt.Fprintf(&b, "| `%s` | %04d | %s / %s | %d | %s | %d | %s |\n", c.Collection, c.ValidatorFrom, c.ValidationLevel, c.ValidationAction,
			c.Scanned, mdEscape(versionsText(c.Versions)), c.Failing, mdEscape(serverCheckText(c.ServerCheck)))
	}
	for _, c := range rep.Collections {
		if c.Failing == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### `%s`\n\n| path | rule | documents | message | example `_id`s |\n|---|---|---|---|---|\n", c.Collection)
		for _, g := range append(append([]report.FailureGroup(nil), c.UpgradeErrors...), c.Groups...) {
			ids := make([]string, len(g.ExampleIDs))
			for i, id := range g.ExampleIDs {
				ids[i] = "`" + id + "`"
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", mdPath(g.Path), g.Rule, g.Count, mdEscape(g.Message), strings.Join(ids, " "))
		}
	}
	markdownIndexBuilds(&b, rep.IndexBuilds)
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownIndexBuilds is renderIndexBuilds as a Markdown table.
func markdownIndexBuilds(b *strings.Builder, builds []report.IndexBuild) {
	if len(builds) == 0 {
		return
	}
	b.WriteString("\n### Unique index builds (on the documents as stored)\n\n| index | file | result | colliding keys |\n|---|---|---|---|\n")
	for _, ib := range builds {
		var keys []string
		for _, c := range ib.Collisions {
			key := keyText(c)
			if c.Key != "" {
				key = mdCode(key)
			}
			keys = append(keys, key+": "+collisionIDs(c, mdCode))
		}
		if more := moreCollidingKeys(ib); more != "" {
			keys = append(keys, more)
		}
		fmt.Fprintf(b, "| `%s.%s` | %s | %s | %s |\n", ib.Collection, ib.Index, ib.File, mdEscape(indexBuildResult(ib)), strings.Join(keys, "<br>"))
	}
}

// mdCode writes s as a Markdown code span in a table cell, escaping the
// pipes; its delimiters are one more backtick than s's longest run.
func mdCode(s string) string {
	fence, run := "`", ""
	for _, r := range s {
		if r != '`' {
			run = ""
			continue
		}
		if run += "`"; len(run) >= len(fence) {
			fence = run + "`"
		}
	}
	if fence != "`" {
		return fence + " " + mdEscape(s) + " " + fence
	}
	return "`" + mdEscape(s) + "`"
}

// indexBuildResult words a predicted build the same way in every format.
func indexBuildResult(b report.IndexBuild) string {
	switch {
	case b.Skipped != "":
		return "skipped: " + b.Skipped
	case b.Fails():
		return count(b.Duplicates, "document") + " would collide (E11000 on MongoDB)" + collisionAdvice(b)
	}
	return "no duplicate key"
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// renderJUnit writes one test suite per collection and one test case per
// failure group (or one passing case when all documents pass). Failures
// under validationAction warn are reported as skipped, since the server
// would accept those writes.
func renderJUnit(w io.Writer, rep *report.Report) error {
	out := junitSuites{Name: "mongomig validate"}
	for _, c := range rep.Collections {
		s := junitSuite{Name: c.Collection, Properties: []junitProperty{{Name: "server cross-check", Value: serverCheckText(c.ServerCheck)}}}
		groups := append(append([]report.FailureGroup(nil), c.UpgradeErrors...), c.Groups...)
		if len(groups) == 0 {
			s.Cases = append(s.Cases, junitCase{Classname: c.Collection, Name: fmt.Sprintf("%s %s the validator of %04d", count(c.Scanned, "document"), verb(c.Scanned, "pass", "passes"), c.ValidatorFrom)})
		}
		seen := map[string]bool{}
		for _, g := range groups {
			msg := &junitMessage{
				Message: fmt.Sprintf("%s: %s", count(g.Count, "document"), g.Message),
				Text:    "example _ids: " + strings.Join(g.ExampleIDs, ", "),
			}
			tc := junitCase{Classname: c.Collection, Name: junitCaseName(seen, g)}
			if c.ValidationAction == "warn" {
				tc.Skipped = msg
				s.Skipped++
			} else {
				tc.Failure = msg
				s.Failures++
			}
			s.Cases = append(s.Cases, tc)
		}
		s.Tests = len(s.Cases)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Suites = append(out.Suites, s)
	}
	if s, ok := junitIndexBuilds(rep.IndexBuilds); ok {
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitIndexBuilds is one suite of the predicted unique index builds, a
// case per index: failed when it would fail, skipped when not predicted.
func junitIndexBuilds(builds []report.IndexBuild) (junitSuite, bool) {
	s := junitSuite{Name: "unique index builds"}
	for _, b := range builds {
		tc := junitCase{Classname: b.Collection, Name: b.Index + " (" + b.File + ")"}
		var lines []string
		for _, c := range b.Collisions {
			lines = append(lines, "key "+keyText(c)+": "+collisionIDs(c, func(id string) string { return id }))
		}
		if more := moreCollidingKeys(b); more != "" {
			lines = append(lines, more)
		}
		msg := &junitMessage{Message: indexBuildResult(b), Text: strings.Join(lines, "\n")}
		switch {
		case b.Skipped != "":
			tc.Skipped = msg
			s.Skipped++
		case b.Fails():
			tc.Failure = msg
			s.Failures++
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Tests = len(s.Cases)
	return s, len(builds) > 0
}
