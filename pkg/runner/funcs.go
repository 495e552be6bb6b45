package runner

import "github.com/mongomig/mongomig/pkg/version"

// ErrFuncMissing is a command refused because a step it would run names a
// Go function this program does not register ([version.ErrFuncMissing];
// errors wrapping it are [*version.FuncMissingError]s).
var ErrFuncMissing = version.ErrFuncMissing
