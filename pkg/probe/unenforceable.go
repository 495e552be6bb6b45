package probe

import (
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// UnenforceableValidator is one validator a migration would send that
// uses $jsonSchema keywords (or bsonType aliases, "bsonType: number") the
// server does not enforce.
type UnenforceableValidator struct {
	Collection string `json:"collection"`
	// Version and File are the migration the validator is sent for; the
	// keyword may come from an earlier one (an open window keeps every
	// version's schema).
	Version  int64         `json:"version"`
	File     string        `json:"file"`
	Pos      migration.Pos `json:"pos,omitempty"`
	Keywords []string      `json:"keywords"`
}

// UnenforceableError is a refusal, before sending anything, of validators
// the server would accept and then not enforce (on DocumentDB, every
// write to the collection fails): up and its plan return it (as
// runner.UnenforceableError). Each is to be rewritten without the
// keywords, or applied client-side only (runner.WithClientSideValidators).
type UnenforceableError struct {
	Validators []UnenforceableValidator
}

func (e *UnenforceableError) Error() string {
	var parts []string
	for _, v := range e.Validators {
		p := fmt.Sprintf("%s uses %s", v.Collection, strings.Join(v.Keywords, ", "))
		if v.File != "" {
			p = migration.DisplayName(v.File) + ": " + p
		}
		parts = append(parts, p)
	}
	return "the server does not enforce these $jsonSchema keywords (it would accept the validator and then refuse every write, or not check it): " + strings.Join(parts, "; ")
}

// Collections are the collections of the refused validators, sorted, once.
func (e *UnenforceableError) Collections() []string {
	var out []string
	for _, v := range e.Validators {
		out = append(out, v.Collection)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// RefusedKeywords lists the keywords of ks that validator (a validator
// document: {$jsonSchema: ...}, possibly inside $and, $or and $nor as
// windows build it) uses, each once, in the order of ks (keywords, sorted,
// then bsonType aliases).
func RefusedKeywords(validator bson.D, ks *KeywordSupport) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch d := v.(type) {
		case bson.D:
			for _, e := range d {
				switch e.Key {
				case "$jsonSchema":
					raw, err := bson.Marshal(e.Value)
					if err != nil {
						continue
					}
					for _, kw := range ks.Refused(raw) {
						if !slices.Contains(out, kw) {
							out = append(out, kw)
						}
					}
				case "$and", "$or", "$nor":
					walk(e.Value)
				}
			}
		case bson.A:
			for _, x := range d {
				walk(x)
			}
		}
	}
	walk(validator)
	// In ks's order (keywords sorted, then aliases), whatever the branches'.
	rank := map[string]int{}
	for i, kw := range ks.Unsupported {
		rank[kw] = i
	}
	for i, a := range ks.UnsupportedTypes {
		rank["bsonType: "+a] = len(ks.Unsupported) + i
	}
	slices.SortFunc(out, func(a, b string) int { return rank[a] - rank[b] })
	return out
}

// Unenforceable lists the validators ms declare that use keywords ks
// refuses (lint's check against a server: every validator, applied or
// not, since an open window sends the older ones again).
func Unenforceable(ms []*migration.Migration, ks *KeywordSupport) []UnenforceableValidator {
	var out []UnenforceableValidator
	for _, m := range ms {
		if m.Broken {
			continue // lint reports its parse errors
		}
		for _, c := range m.Collections {
			if kws := RefusedKeywords(c.Validator, ks); len(kws) > 0 {
				out = append(out, UnenforceableValidator{Collection: c.Name, Version: m.Version, File: m.File, Pos: c.Pos, Keywords: kws})
			}
		}
	}
	return out
}
