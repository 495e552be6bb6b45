package version

import "sort"

// Known lists, sorted, every collection the registry accepts documents
// of: those a migration names (at [Registry.Current], 0 without upgrades)
// and those declared with [WithCollections]. AllowsUnknown says whether it
// also accepts every other name (at version 0).
func (r *Registry) Known() []string {
	out := make([]string, 0, len(r.known))
	for n := range r.known {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// AllowsUnknown reports [AllowUnknownCollections].
func (r *Registry) AllowsUnknown() bool { return r.allowUnknown }
