package runner

// SetHook lets tests run code (such as killing the process) at points of a
// run: "command" after each command, "recorded" after each ledger entry.
func SetHook(r *Runner, fn func(point string, version int64, i int)) { r.hook = fn }
