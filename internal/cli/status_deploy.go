package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/mongomig/mongomig/pkg/runner"
)

// renderDeploy prints, per collection, where a deploy stands (backfill,
// proof, effective level and action, next up), the server's differences
// from the files, the anomalies, and the marks.
func (e *env) renderDeploy(st *runner.Status) {
	o := e.out
	var lines []string
	for _, c := range st.Collections {
		if b := c.Backfill; b != nil {
			lines = append(lines, fmt.Sprintf("%s: %s", c.Name, backfillText(b)))
		}
		if s := settingsText(c); s != "" {
			lines = append(lines, fmt.Sprintf("%s: %s", c.Name, s))
		}
		if c.NextUp != "" {
			lines = append(lines, fmt.Sprintf("%s: next up: %s", c.Name, c.NextUp))
		}
	}
	if len(lines) > 0 {
		o.printf("%s\n", o.bold("deploy"))
		for _, l := range lines {
			o.printf("  %s\n", display(l))
		}
	}
	for _, c := range st.Collections {
		for _, d := range c.ServerDrift {
			o.printf("  %s %s (drift of the server: put it back with a migration, or undo the change made by hand)\n", o.red("SERVER DRIFT"), display(d.Message))
		}
		for _, a := range c.Anomalies {
			switch a.Kind {
			case runner.AnomalyAboveCurrent:
				// The TOO NEW line says it.
			case runner.AnomalyBelowClosed:
				o.printf("  %s %s; find that release and stop it, then run mongomig backfill to upgrade them\n", o.red("ANOMALY"), display(a.Message))
			default:
				o.printf("  %s %s\n", o.red("ANOMALY"), display(a.Message))
			}
		}
	}
	if st.ServerUnchecked != "" {
		o.printf("  %s\n", o.faint("the server was not checked against the files: "+display(st.ServerUnchecked)))
	}
	if len(st.Marks) > 0 {
		o.printf("%s\n", o.bold("marks"))
		var rows [][]cell
		for _, m := range st.Marks {
			state := "applied"
			if !m.Applied {
				state = "not applied"
			}
			rows = append(rows, []cell{{text: fmt.Sprintf("%04d", m.Version)}, {text: "marked " + state, paint: o.yellow},
				{text: m.At.UTC().Format("2006-01-02 15:04:05Z") + " by " + display(m.By.Host), paint: o.faint}, {text: display(m.Reason)}})
		}
		o.table("  ", rows)
	}
}

// backfillText is a backfill's progress and proof in one line.
func backfillText(b *runner.BackfillStatus) string {
	parts := []string{fmt.Sprintf("backfill to v%d: %s upgraded", b.Target, count(b.Upgraded, "document"))}
	if b.Remaining != nil {
		parts[0] += fmt.Sprintf(", %d below the current version", *b.Remaining)
	}
	if b.RatePerSecond > 0 {
		parts = append(parts, fmt.Sprintf("%.1f docs/s in the last run", b.RatePerSecond))
	}
	if b.LastRun != nil {
		parts = append(parts, "last run "+stamp(*b.LastRun))
	}
	switch {
	case b.Resumable:
		parts = append(parts, "stopped half-way: the next backfill resumes from its checkpoint")
	case b.Done && !b.Proven:
		parts = append(parts, "walked to the end, not proven (documents were left: run backfill again)")
	}
	if b.Proven {
		p := "proven"
		if b.ProvenAt != nil {
			p += " " + stamp(*b.ProvenAt)
		}
		parts = append(parts, fmt.Sprintf("%s (generation %d): no document below v%d remained", p, b.Generation, b.Target))
	} else if !b.Resumable && !b.Done {
		parts = append(parts, "not proven")
	}
	return strings.Join(parts, "; ")
}

// settingsText says where the level and action come from when the
// migration of the validator does not declare them itself ("" when it
// does).
func settingsText(c runner.CollectionStatus) string {
	if c.ValidatorFrom == 0 || c.Enforcement == runner.EnforcementClientSide {
		return ""
	}
	var parts []string
	one := func(name, value string, from int64) {
		switch {
		case from == c.ValidatorFrom:
		case from == 0:
			parts = append(parts, fmt.Sprintf("%s %s, kept from the server (no migration declares it)", name, value))
		default:
			parts = append(parts, fmt.Sprintf("%s %s, inherited from %04d (%04d omits it)", name, value, from, c.ValidatorFrom))
		}
	}
	one("validationLevel", c.Level, c.LevelFrom)
	one("validationAction", c.Action, c.ActionFrom)
	return strings.Join(parts, "; ")
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }
