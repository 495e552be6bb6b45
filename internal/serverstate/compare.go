package serverstate

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/migration"
)

// Declared is what the applied migrations declare for a collection.
type Declared struct {
	Name string
	// Validator is the validator to put back (nil: none is declared, or
	// the server refused it and it is enforced client-side only); Also is
	// another validator that is as declared (the plain schema of a window
	// a backfill proved closable). [Declare] leaves both to the caller,
	// which knows the window.
	Validator, Also bson.D
	From            int64 // the migration that declared the validator
	// Level and Action are the last declared ("": none is, and the
	// collection keeps the server's, which Compare leaves alone).
	Level, Action string
	Indexes       map[string]migration.Index
	IndexFrom     map[string]int64
	Dropped       map[string]int64 // name -> the migration that dropped it
}

// Declare folds the migrations of ms that applied says are applied into
// what they declare per collection, in name order: the last level and
// action declared, the indexes created and not dropped since (and the
// migration of each), the indexes dropped, and From, the last migration
// that declares a validator.
func Declare(ms []*migration.Migration, applied func(version int64) bool) []Declared {
	byName := map[string]*Declared{}
	var names []string
	for _, m := range ms {
		if !applied(m.Version) {
			continue
		}
		for _, c := range m.Collections {
			d := byName[c.Name]
			if d == nil {
				d = &Declared{Name: c.Name, Indexes: map[string]migration.Index{}, IndexFrom: map[string]int64{}, Dropped: map[string]int64{}}
				byName[c.Name] = d
				names = append(names, c.Name)
			}
			if c.Validator != nil {
				d.From = m.Version
			}
			if c.ValidationLevel != "" {
				d.Level = string(c.ValidationLevel)
			}
			if c.ValidationAction != "" {
				d.Action = string(c.ValidationAction)
			}
			for _, x := range c.Indexes.Drop {
				delete(d.Indexes, x.Name)
				delete(d.IndexFrom, x.Name)
				d.Dropped[x.Name] = m.Version
			}
			for _, idx := range append(slices.Clone(c.Indexes.Create), c.Indexes.Rebuild...) {
				d.Indexes[idx.Name], d.IndexFrom[idx.Name] = idx, m.Version
				delete(d.Dropped, idx.Name)
			}
			for _, ch := range c.Indexes.Change {
				idx, ok := d.Indexes[ch.Name]
				if !ok {
					continue
				}
				if ch.ExpireAfterSeconds != nil {
					idx.ExpireAfterSeconds = ch.ExpireAfterSeconds
				}
				if ch.Hidden != nil {
					idx.Hidden = *ch.Hidden
				}
				d.Indexes[ch.Name], d.IndexFrom[ch.Name] = idx, m.Version
			}
		}
	}
	slices.Sort(names)
	out := make([]Declared, 0, len(names))
	for _, name := range names {
		out = append(out, *byName[name])
	}
	return out
}

// Read reads the validator options of the database's collections and the
// indexes of those of names that exist.
func Read(ctx context.Context, db *mongo.Database, names []string) (map[string]Collection, error) {
	out, err := Options(ctx, db, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("list collections: %w", err)
	}
	for _, name := range names {
		s, ok := out[name]
		if !ok {
			continue
		}
		if s.Indexes, s.Unique, err = indexes(ctx, db, name); err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}

func indexes(ctx context.Context, db *mongo.Database, coll string) (map[string]bson.D, map[string]bool, error) {
	cur, err := db.Collection(coll).Indexes().List(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("list the indexes of %s: %w", coll, err)
	}
	var specs []struct {
		Name   string `bson:"name"`
		Key    bson.D `bson:"key"`
		Unique bool   `bson:"unique"`
	}
	if err := cur.All(ctx, &specs); err != nil {
		return nil, nil, fmt.Errorf("list the indexes of %s: %w", coll, err)
	}
	keys, unique := map[string]bson.D{}, map[string]bool{}
	for _, s := range specs {
		keys[s.Name], unique[s.Name] = s.Key, s.Unique
	}
	return keys, unique, nil
}

// Difference is one way a server differs from the declared state (the
// fields of events.StateDiffers, which it converts to).
type Difference struct {
	Collection      string
	What            string
	Declared, Found string
	From            int64
}

// Fix is one change that puts the declared state back: the validator
// options to set (SetOptions, by create when Create, else collMod), or an
// index to drop (DropIndex), or one to create (CreateIndex).
type Fix struct {
	SetOptions  bson.D
	Create      bool
	DropIndex   string
	CreateIndex *migration.Index
}

// Compare lists how s, what the server holds, differs from d, and the
// fixes, in the order to apply them, that put d back: the validator
// options first, then the declared drops, then each index that is absent
// or differs (dropped first when it differs).
func Compare(d Declared, s Collection) ([]Difference, []Fix) {
	var diffs []Difference
	var fixes []Fix
	differs := func(what, declared, found string, from int64) {
		diffs = append(diffs, Difference{Collection: d.Name, What: what, Declared: declared, Found: found, From: from})
	}
	if d.Validator != nil {
		var fields bson.D
		if !sameDoc(s.Validator, d.Validator) && (d.Also == nil || !sameDoc(s.Validator, d.Also)) {
			differs("the validator", "another one", docText(s.Validator), d.From)
			fields = append(fields, bson.E{Key: "validator", Value: d.Validator})
		}
		if level := bsonx.OrDefault(s.Level, "strict"); d.Level != "" && level != d.Level && (d.Level != "constraint" || level != "strict") {
			// constraint is held strict until the window closes, and never
			// sent with a validator (pkg/runner, constraint.go): put back
			// as strict, raised again when the window closes.
			differs("validationLevel", d.Level, level, d.From)
			fields = append(fields, bson.E{Key: "validationLevel", Value: strings.Replace(d.Level, "constraint", "strict", 1)})
		}
		if action := bsonx.OrDefault(s.Action, "error"); d.Action != "" && action != d.Action {
			differs("validationAction", d.Action, action, d.From)
			fields = append(fields, bson.E{Key: "validationAction", Value: d.Action})
		}
		if len(fields) > 0 {
			fixes = append(fixes, Fix{SetOptions: fields, Create: !s.Exists})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(d.Dropped)) {
		if _, ok := s.Indexes[name]; ok {
			differs("index "+name, "its drop", "present", d.Dropped[name])
			fixes = append(fixes, Fix{DropIndex: name})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(d.IndexFrom)) {
		idx := d.Indexes[name]
		key, ok := s.Indexes[name]
		switch {
		case !ok:
			differs("index "+name, "it", "absent", d.IndexFrom[name])
		case keyText(key) != keyText(idx.Keys) || s.Unique[name] != idx.Unique:
			differs("index "+name, keyText(idx.Keys)+uniqueText(idx.Unique), keyText(key)+uniqueText(s.Unique[name]), d.IndexFrom[name])
			fixes = append(fixes, Fix{DropIndex: name})
		default:
			continue
		}
		fixes = append(fixes, Fix{CreateIndex: &idx})
	}
	return diffs, fixes
}

// sameDoc compares a validator the server holds with a declared one as
// BSON: the server stores a validator as it was sent (MongoDB:
// src/mongo/db/catalog/collection_options.cpp keeps the validator
// document as given).
func sameDoc(held bson.Raw, d bson.D) bool {
	if len(held) == 0 || len(d) == 0 {
		return len(held) == 0 && len(d) == 0
	}
	b, err := bson.Marshal(d)
	return err == nil && bytes.Equal(held, b)
}

func docText(raw bson.Raw) string {
	if len(raw) == 0 {
		return "none"
	}
	var d bson.D
	if err := bson.Unmarshal(raw, &d); err != nil {
		return err.Error()
	}
	b, err := bson.MarshalExtJSON(d, false, false)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// keyText is an index key as text, its numbers as numbers whatever their
// BSON type ({a: 1} and {a: 1.0} are the same index key).
func keyText(d bson.D) string {
	var b strings.Builder
	for i, e := range d {
		if i > 0 {
			b.WriteString(", ")
		}
		v := e.Value
		switch n := v.(type) {
		case int32:
			v = float64(n)
		case int64:
			v = float64(n)
		}
		fmt.Fprintf(&b, "%s: %v", e.Key, v)
	}
	return "{" + b.String() + "}"
}

func uniqueText(u bool) string {
	if u {
		return " unique"
	}
	return ""
}
