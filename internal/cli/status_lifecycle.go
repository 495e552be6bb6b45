package cli

import (
	"fmt"
	"strings"

	"github.com/mongomig/mongomig/pkg/runner"
)

// renderLifecycle prints status's collection lifecycle (views, capped
// limits, TTL and hidden indexes, constraint), the bucket families
// (members, and what the next `mongomig buckets` would create or drop)
// and the collections no migration declares.
func (e *env) renderLifecycle(st *runner.Status) {
	o := e.out
	if len(st.Lifecycle) > 0 {
		o.printf("%s\n", o.bold("lifecycle"))
		for _, c := range st.Lifecycle {
			o.printf("  %s: %s\n", display(c.Name), lifecycleLine(c))
		}
	}
	if len(st.Buckets) > 0 {
		o.printf("%s\n", o.bold("bucket families"))
		for _, f := range st.Buckets {
			keep := "kept forever"
			if f.Keep > 0 {
				keep = count(f.Keep, f.Period) + " kept"
			}
			o.printf("  %s (%s, %d ahead, %s): %s", display(f.Pattern), f.Period, f.Ahead, keep, count(len(f.Members), "member"))
			if n := len(f.Members); n > 0 {
				o.printf(", %s to %s", display(f.Members[0]), display(f.Members[n-1]))
			}
			o.printf("\n")
			if len(f.Create)+len(f.Drop) > 0 {
				o.printf("    %s\n", o.yellow("the next `mongomig buckets` (or up) creates "+count(len(f.Create), "member")+" and drops "+count(len(f.Drop), "member")))
			}
			if len(f.Create) > 0 {
				o.printf("    missing: %s\n", display(strings.Join(f.Create, ", ")))
			}
			if len(f.Drop) > 0 {
				o.printf("    past keep: %s\n", display(strings.Join(f.Drop, ", ")))
			}
		}
	}
	if len(st.Undeclared) > 0 {
		o.printf("%s\n", o.bold("undeclared (no migration declares them; never dropped)"))
		for _, u := range st.Undeclared {
			o.printf("  %s  %s\n", display(u.Name), o.faint(u.Type))
		}
	}
}

// lifecycleLine is one collection's lifecycle state in a line: "view on
// sessions [...]", "capped 1048576 bytes, max 1000; TTL lastSeen_1 after
// 1800s; hidden email_1; validationLevel strict (constraint declared:
// raised when the validator window closes)".
func lifecycleLine(c runner.CollectionLifecycle) string {
	if c.Type == "" {
		return "not on the server"
	}
	if c.Type == "view" {
		return fmt.Sprintf("view on %s, pipeline %s", display(c.ViewOn), string(c.Pipeline))
	}
	var parts []string
	if c.Type != "collection" {
		parts = append(parts, c.Type)
	}
	if c.Capped {
		s := fmt.Sprintf("capped %d bytes", c.Size)
		if c.Max > 0 {
			s += fmt.Sprintf(", max %d documents", c.Max)
		}
		parts = append(parts, s)
	}
	for _, idx := range c.Indexes {
		if idx.ExpireAfterSeconds != nil {
			parts = append(parts, fmt.Sprintf("TTL %s after %ds", display(idx.Name), *idx.ExpireAfterSeconds))
		}
		if idx.Hidden {
			parts = append(parts, "hidden "+display(idx.Name))
		}
	}
	if c.ValidationLevel != "" {
		s := "validationLevel " + c.ValidationLevel
		switch {
		case c.Prepared && c.ValidationLevel != "constraint":
			s += " (prepared for constraint: a validator change lowers it first)"
		case c.DeclaredConstraint && c.ValidationLevel != "constraint":
			s += " (constraint declared: raised when the validator window closes)"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "nothing of the lifecycle held"
	}
	return strings.Join(parts, "; ")
}
