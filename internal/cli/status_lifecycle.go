package cli

import "github.com/mongomig/mongomig/pkg/runner"

// renderLifecycle prints status's bucket families (members, and what the
// next `mongomig buckets` would create or drop) and the collections no
// migration declares.
func (e *env) renderLifecycle(st *runner.Status) {
	o := e.out
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
		}
	}
	if len(st.Undeclared) > 0 {
		o.printf("%s\n", o.bold("undeclared (no migration declares them; never dropped)"))
		for _, u := range st.Undeclared {
			o.printf("  %s  %s\n", display(u.Name), o.faint(u.Type))
		}
	}
}
