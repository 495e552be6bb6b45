package version

import (
	"errors"
	"fmt"
	"sort"

	"github.com/mongomig/mongomig/internal/suggest"
)

// ErrUnknownCollection is returned (wrapped in an [*UnknownCollectionError])
// by [Registry.Upgrade], [Registry.UpgradeRaw], [Registry.UpgradeM],
// [Registry.Stamp], [Registry.Validate] and [Registry.ValidateRaw] for a
// collection that no migration names and the application did not declare
// with [WithCollections]. Accepting it silently would stamp a typo'd
// collection's documents at version 0, and the next backfill would run
// every upgrade again on documents that are already current.
var ErrUnknownCollection = errors.New("unknown collection")

// UnknownCollectionError names a collection the registry does not know,
// and the known name closest to it.
type UnknownCollectionError struct {
	Collection string
	// Suggestion is the known collection closest to Collection, or "".
	Suggestion string
}

func (e *UnknownCollectionError) Error() string {
	hint := ""
	if e.Suggestion != "" {
		hint = fmt.Sprintf("did you mean %q? ", e.Suggestion)
	}
	return fmt.Sprintf("%v %q: no migration names it; %sa collection without migrations must be declared with version.WithCollections(%q)",
		ErrUnknownCollection, e.Collection, hint, e.Collection)
}

func (e *UnknownCollectionError) Unwrap() error { return ErrUnknownCollection }

// WithCollections declares collections that no migration names, so that
// [Registry.Stamp] and the Upgrade methods accept their documents (at
// version 0, with nothing to upgrade) instead of returning
// [ErrUnknownCollection].
func WithCollections(names ...string) Option {
	return optionFunc(func(c *config) error {
		for _, n := range names {
			if n == "" {
				return errors.New("WithCollections: empty collection name")
			}
			c.extra = append(c.extra, n)
		}
		return nil
	})
}

// AllowUnknownCollections makes every collection name acceptable: one no
// migration names is at version 0 with nothing to upgrade. For
// applications whose collection names are not known in advance (one per
// tenant, say); prefer [WithCollections], which still catches typos.
func AllowUnknownCollections(allow bool) Option {
	return optionFunc(func(c *config) error {
		c.allowUnknown = allow
		return nil
	})
}

// setKnown records every collection a migration names, plus those
// declared with WithCollections.
func (r *Registry) setKnown(cfg config) {
	r.allowUnknown = cfg.allowUnknown
	r.known = map[string]bool{}
	for _, m := range r.migrations {
		for _, c := range m.Collections {
			r.known[c.Name] = true
		}
	}
	for _, n := range cfg.extra {
		r.known[n] = true
	}
}

// CheckCollection returns an [*UnknownCollectionError] for a collection
// that no migration names and [WithCollections] does not declare (nil if
// it is known, or with [AllowUnknownCollections]): what every upgrade,
// stamp and validation of a document of coll would return.
func (r *Registry) CheckCollection(coll string) error { return r.checkKnown(coll) }

// checkKnown returns an [*UnknownCollectionError] for a collection that
// is neither named by a migration nor declared.
func (r *Registry) checkKnown(coll string) error {
	if r.allowUnknown || r.known[coll] {
		return nil
	}
	names := make([]string, 0, len(r.known))
	for n := range r.known {
		names = append(names, n)
	}
	sort.Strings(names)
	s, _ := suggest.Closest(coll, names)
	return &UnknownCollectionError{Collection: coll, Suggestion: s}
}
