package cli

import (
	"fmt"

	"github.com/mongomig/mongomig/pkg/runner"
)

// statusCounts words status's header counts: pending, drifted (file
// edited) and, when there are any, missing (applied, file gone), which
// st.Drifted counts together.
func statusCounts(st *runner.Status) string {
	missing := 0
	for _, m := range st.Migrations {
		if m.State == runner.StateMissing {
			missing++
		}
	}
	s := fmt.Sprintf("%d pending, %d drifted", st.Pending, st.Drifted-missing)
	if missing > 0 {
		s += fmt.Sprintf(", %d missing", missing)
	}
	return s
}
