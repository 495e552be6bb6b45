package cli

import (
	"strings"

	"github.com/mongomig/mongomig/pkg/runner"
)

// raiseStep says what a tightening command that raises a collection to
// validationLevel constraint does (pkg/runner, constraint.go), "" for the
// collMod that closes a window.
func raiseStep(c runner.Command) string {
	t := string(c.Text)
	switch {
	case strings.Contains(t, `"prepareConstraintValidationLevel":true`):
		return "prepare " + display(c.Collection) + " for validationLevel constraint (the window is closed)"
	case strings.Contains(t, `"validationLevel":"constraint"`):
		return "raise " + display(c.Collection) + " to validationLevel constraint (the server checks every document first)"
	case strings.Contains(t, `"prepareConstraintValidationLevel":false`):
		return "clear the prepare flag of " + display(c.Collection) + " (the server refused constraint)"
	}
	return ""
}
