package runner

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/events"
)

// reassertCommands are the commands that put d back on a server in state
// s, each difference logged as an [events.StateDiffers].
func (r *Runner) reassertCommands(d declaredState, s serverState) []Command {
	var cmds []Command
	differs := func(what, declared, found string, from int64) {
		r.cfg.log.Log(stateDiffers(d.name, what, declared, found, from))
	}
	if d.validator != nil {
		var fields bson.D
		if !sameDoc(s.validator, d.validator) && (d.also == nil || !sameDoc(s.validator, d.also)) {
			differs("the validator", "another one", docText(s.validator), d.from)
			fields = append(fields, bson.E{Key: "validator", Value: d.validator})
		}
		if orText(s.level, "strict") != d.level {
			differs("validationLevel", d.level, orText(s.level, "strict"), d.from)
			fields = append(fields, bson.E{Key: "validationLevel", Value: d.level})
		}
		if orText(s.action, "error") != d.action {
			differs("validationAction", d.action, orText(s.action, "error"), d.from)
			fields = append(fields, bson.E{Key: "validationAction", Value: d.action})
		}
		switch {
		case len(fields) == 0:
		case s.exists:
			cmds = append(cmds, collModCommand(d.name, fields))
		default:
			cmds = append(cmds, createCommand(d.name, fields))
		}
	}
	for _, name := range sortedKeys(d.dropped) {
		if _, ok := s.indexes[name]; ok {
			differs("index "+name, "its drop", "present", d.dropped[name])
			cmds = append(cmds, dropIndexCommand(d.name, name))
		}
	}
	for _, name := range sortedKeys(d.indexFrom) {
		idx := d.indexes[name]
		key, ok := s.indexes[name]
		switch {
		case !ok:
			differs("index "+name, "it", "absent", d.indexFrom[name])
		case keyText(key) != keyText(idx.Keys) || s.unique[name] != idx.Unique:
			differs("index "+name, keyText(idx.Keys)+uniqueText(idx.Unique), keyText(key)+uniqueText(s.unique[name]), d.indexFrom[name])
			cmds = append(cmds, dropIndexCommand(d.name, name))
		default:
			continue
		}
		cmds = append(cmds, createIndexCommand(d.name, idx))
	}
	return cmds
}

func stateDiffers(coll, what, declared, found string, from int64) events.StateDiffers {
	return events.StateDiffers{Collection: coll, What: what, Declared: declared, Found: found, From: from}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// sameDoc compares two documents as BSON: the server stores a validator as
// it was sent (MongoDB: src/mongo/db/catalog/collection_options.cpp keeps
// the validator document as given).
func sameDoc(a, b bson.D) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	ab, err1 := bson.Marshal(a)
	bb, err2 := bson.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ab, bb)
}

func docText(d bson.D) string {
	if len(d) == 0 {
		return "none"
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

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
