package cli

import "github.com/mongomig/mongomig/pkg/reshape"

// printRunPlan renders what a planned migration's run-once operations
// would touch (up --dry-run).
func printRunPlan(o *output, ops []reshape.Planned) {
	for _, op := range ops {
		o.printf("  run %d (line %d): %s\n", op.Index+1, op.Line, display(op.Summary))
		if op.Refused != "" {
			o.printf("    %s %s\n", o.red("would refuse:"), display(op.Refused))
		}
	}
}
