package version

// Registered reports whether opts register a Go function named name
// ([WithFunc], [WithFuncs]): whether a program built with them can run a
// `func: name` step. Options that fail to apply count as registering
// nothing more.
func Registered(name string, opts ...Option) bool {
	cfg := config{field: DefaultField, funcs: map[string]Func{}}
	for _, o := range opts {
		_ = o.apply(&cfg)
	}
	_, ok := cfg.funcs[name]
	return ok
}
