// Package cmddoc builds the command documents mongomig sends to change a
// collection's schema (create, collMod, createIndexes, dropIndexes): those
// that apply or revert a migration, exactly as sent, and what became of
// them (results, the PartialError of a migration that failed part-way,
// the RevertStoppedError of a revert that stopped part-way).
// It sends nothing: pkg/runner is the only sender of these commands.
package cmddoc

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/internal/serverstate"
	"github.com/mongomig/mongomig/pkg/migration"
)

// Command is one database command a migration sends, exactly as sent.
type Command struct {
	Collection string `json:"collection"`
	// Name is the command: create, collMod, createIndexes or dropIndexes.
	Name string `json:"name"`
	// Doc is the command document.
	Doc bson.D `json:"-"`
	// Text is Doc as relaxed Extended JSON, for plans and reports; in JSON
	// output it is the command document itself.
	Text bsonx.ExtJSON `json:"command"`
	// Index is the index created or dropped, for index commands.
	Index string `json:"index,omitempty"`
	// Tighten marks a collMod that closes a validator window.
	Tighten bool `json:"tighten,omitempty"`
	// Features are the lifecycle features (probe.Feature*) the command
	// needs; Refused, when set, is why it cannot be sent (internal/lifecycleplan).
	Features []string `json:"features,omitempty"`
	Refused  string   `json:"refused,omitempty"`
	// Cost is what the command costs the server, for the plan (the
	// documents a rebuild indexes, an expired backlog); Documents its count.
	Cost      string `json:"cost,omitempty"`
	Documents *int64 `json:"documents,omitempty"`
}

// New is the command name sending doc for coll (index: the index it
// creates or drops).
func New(coll, name, index string, doc bson.D) Command {
	b, err := bson.MarshalExtJSON(doc, false, false)
	text := bsonx.ExtJSON(b)
	if err != nil {
		text = bsonx.ExtJSON(err.Error())
	}
	return Command{Collection: coll, Name: name, Doc: doc, Text: text, Index: index}
}

// HasValidatorChange reports whether c sets the validator, level or action.
func HasValidatorChange(c *migration.Collection) bool {
	return c.Validator != nil || c.ValidationLevel != "" || c.ValidationAction != ""
}

// ValidatorFields are the validator options as command fields.
func ValidatorFields(validator bson.D, level migration.Level, action migration.Action) bson.D {
	var d bson.D
	if validator != nil {
		d = append(d, bson.E{Key: "validator", Value: validator})
	}
	if level != "" {
		d = append(d, bson.E{Key: "validationLevel", Value: string(level)})
	}
	if action != "" {
		d = append(d, bson.E{Key: "validationAction", Value: string(action)})
	}
	return d
}

// Create is create of coll with fields.
func Create(coll string, fields bson.D) Command {
	return New(coll, "create", "", append(bson.D{{Key: "create", Value: coll}}, fields...))
}

// CollMod is collMod of coll with fields.
func CollMod(coll string, fields bson.D) Command {
	return New(coll, "collMod", "", append(bson.D{{Key: "collMod", Value: coll}}, fields...))
}

// DropIndex is dropIndexes of index name of coll.
func DropIndex(coll, name string) Command {
	return New(coll, "dropIndexes", name, bson.D{{Key: "dropIndexes", Value: coll}, {Key: "index", Value: name}})
}

// CreateIndex is createIndexes of idx on coll.
func CreateIndex(coll string, idx migration.Index) Command {
	spec := idx.Spec()
	return New(coll, "createIndexes", idx.Name, bson.D{{Key: "createIndexes", Value: coll}, {Key: "indexes", Value: bson.A{spec}}})
}

// Up are the commands that apply m, given which collections exist.
// Validators first (create or collMod), then index drops, then creates.
// validator returns the validator to send for a collection as of m (see
// windowplan.Source.For): it is sent when m declares one, and also when m only
// raises the document version, so that the window gains the new version's
// branch.
func Up(m *migration.Migration, exists map[string]bool, validator func(coll string) (bson.D, error)) ([]Command, error) {
	var cmds []Command
	for _, c := range m.Collections {
		cmd, err := upValidator(c, exists, validator)
		if err != nil {
			return nil, err
		}
		if cmd != nil {
			cmds = append(cmds, *cmd)
		}
		for _, d := range c.Indexes.Drop {
			cmds = append(cmds, DropIndex(c.Name, d.Name))
		}
		for _, idx := range c.Indexes.Create {
			cmds = append(cmds, CreateIndex(c.Name, idx))
			exists[c.Name] = true
		}
	}
	return cmds, nil
}

// upValidator is the collMod (or create) that puts c's validator
// in force, or nil when c changes no validator and an upgrade leaves none
// to send. It never decides whether c's index changes are sent: a
// collection with an upgrade and indexes but no validator gets its
// indexes all the same.
func upValidator(c *migration.Collection, exists map[string]bool, validator func(coll string) (bson.D, error)) (*Command, error) {
	if !HasValidatorChange(c) && len(c.Upgrade) == 0 {
		return nil, nil
	}
	var v bson.D
	if c.Validator != nil || len(c.Upgrade) > 0 {
		var err error
		if v, err = validator(c.Name); err != nil {
			return nil, err
		}
	}
	fields := ValidatorFields(v, c.ValidationLevel, c.ValidationAction)
	if len(fields) == 0 {
		return nil, nil // an upgrade, and no validator in force: nothing to send
	}
	if exists[c.Name] {
		cmd := CollMod(c.Name, fields)
		return &cmd, nil
	}
	exists[c.Name] = true
	cmd := Create(c.Name, fields)
	return &cmd, nil
}

// indexBefore returns the spec of the index named name as created by the
// latest migration below v that creates it, if any.
func indexBefore(ms []*migration.Migration, coll, name string, v int64) (migration.Index, bool) {
	var found migration.Index
	ok := false
	for _, m := range ms {
		if m.Version >= v {
			break
		}
		if c := m.Collection(coll); c != nil {
			for _, idx := range c.Indexes.Create {
				if idx.Name == name {
					found, ok = idx, true
				}
			}
		}
	}
	return found, ok
}

// Down are the commands that revert m's validators and indexes to the
// state the earlier migrations declare. An index m dropped that no earlier migration created
// cannot be recreated; it is returned in unknown.
func Down(ms []*migration.Migration, m *migration.Migration, exists map[string]bool, window func(coll string, at int64) bson.D) (cmds []Command, unknown []string) {
	for _, c := range m.Collections {
		upgradeOnly := !HasValidatorChange(c) && len(c.Upgrade) > 0
		if (HasValidatorChange(c) || upgradeOnly && window(c.Name, m.Version) != nil) && exists[c.Name] {
			prev := migration.StateBefore(ms, c.Name, m.Version)
			var fields bson.D
			if c.Validator != nil || len(c.Upgrade) > 0 {
				v := window(c.Name, m.Version-1)
				if v == nil {
					v = bson.D{} // no validator before: remove it
				}
				fields = append(fields, bson.E{Key: "validator", Value: v})
			}
			if c.ValidationLevel != "" {
				fields = append(fields, bson.E{Key: "validationLevel", Value: string(bsonx.OrDefault(prev.Level, migration.LevelStrict))})
			}
			if c.ValidationAction != "" {
				fields = append(fields, bson.E{Key: "validationAction", Value: string(bsonx.OrDefault(prev.Action, migration.ActionError))})
			}
			cmds = append(cmds, CollMod(c.Name, fields))
		}
		for _, idx := range c.Indexes.Create {
			cmds = append(cmds, DropIndex(c.Name, idx.Name))
		}
		for _, d := range c.Indexes.Drop {
			spec, ok := indexBefore(ms, c.Name, d.Name, m.Version)
			if !ok {
				unknown = append(unknown, c.Name+"."+d.Name)
				continue
			}
			cmds = append(cmds, CreateIndex(c.Name, spec))
		}
	}
	return cmds, unknown
}

// SentValidator is the validator cmd sends (nil: none).
func SentValidator(cmd Command) (bson.D, bool) {
	if cmd.Name != "create" && cmd.Name != "collMod" {
		return nil, false
	}
	for _, e := range cmd.Doc[1:] {
		if e.Key == "validator" {
			d, ok := e.Value.(bson.D)
			return d, ok
		}
	}
	return nil, false
}

// SetsValidatorOptions reports whether c is a create or collMod that sets
// a validator, validationLevel or validationAction.
func SetsValidatorOptions(c Command) bool {
	if c.Name != "create" && c.Name != "collMod" {
		return false
	}
	for _, e := range c.Doc[1:] {
		switch e.Key {
		case "validator", "validationLevel", "validationAction":
			return true
		}
	}
	return false
}

// Fixes are the commands that carry out fixes, serverstate.Compare's way
// of putting coll's declared state back, in order.
func Fixes(coll string, fixes []serverstate.Fix) []Command {
	var cmds []Command
	for _, f := range fixes {
		switch {
		case f.CreateIndex != nil:
			cmds = append(cmds, CreateIndex(coll, *f.CreateIndex))
		case f.DropIndex != "":
			cmds = append(cmds, DropIndex(coll, f.DropIndex))
		case f.Create:
			cmds = append(cmds, Create(coll, f.SetOptions))
		default:
			cmds = append(cmds, CollMod(coll, f.SetOptions))
		}
	}
	return cmds
}
