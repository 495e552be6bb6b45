package migration

import (
	"crypto/sha256"
	"encoding/hex"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// SchemaChecksum covers what `up` sends and how documents are upgraded:
// per collection the validator, level, action, upgrade steps and index
// changes (each created index as the createIndexes command that builds
// it), the run-once operations and the time-bucketed families. The revert-only and documentary parts (downgrade, examples,
// description, comments, formatting) are left out, so they may be added
// or corrected after a migration was applied without being drift. The
// ledger stores it: its value for a file never changes between releases.
func SchemaChecksum(m *Migration) string {
	var colls bson.A
	for _, c := range m.Collections {
		var steps bson.A
		for _, s := range c.Upgrade {
			var fields bson.A
			for _, f := range s.Fields {
				fields = append(fields, bson.D{{Key: "path", Value: f.Path}, {Key: "value", Value: f.Value}, {Key: "to", Value: f.To}})
			}
			steps = append(steps, bson.D{{Key: "op", Value: string(s.Op)}, {Key: "fields", Value: fields}, {Key: "func", Value: s.Func}})
		}
		var creates bson.A
		for _, idx := range c.Indexes.Create {
			creates = append(creates, bson.D{{Key: "createIndexes", Value: c.Name}, {Key: "indexes", Value: bson.A{idx.Spec()}}})
		}
		var drops bson.A
		for _, d := range c.Indexes.Drop {
			drops = append(drops, d.Name)
		}
		coll := bson.D{
			{Key: "name", Value: c.Name}, {Key: "validator", Value: c.Validator},
			{Key: "validationLevel", Value: string(c.ValidationLevel)}, {Key: "validationAction", Value: string(c.ValidationAction)},
			{Key: "upgrade", Value: steps}, {Key: "create", Value: creates}, {Key: "drop", Value: drops},
		}
		if ic := integrityChecksum(c); ic != nil {
			// Only when declared: other files keep their checksums.
			coll = append(coll, bson.E{Key: "integrity", Value: ic})
		}
		colls = append(colls, coll)
	}
	covered := bson.D{{Key: "version", Value: m.Version}, {Key: "collections", Value: colls}}
	if ops := runChecksum(m); ops != nil {
		// Only when present: the checksums of files without run-once
		// operations are those they had before run: existed.
		covered = append(covered, bson.E{Key: "run", Value: ops})
	}
	if lc := lifecycleChecksum(m); lc != nil {
		covered = append(covered, bson.E{Key: "lifecycle", Value: lc}) // only when present, as run
	}
	if fams := bucketsChecksum(m); fams != nil {
		covered = append(covered, bson.E{Key: "buckets", Value: fams}) // as run: only when present
	}
	b, err := bson.MarshalExtJSON(covered, true, false)
	if err != nil {
		// Every value came from a parsed file: it marshals. Fall back to the
		// file's bytes rather than hide an error.
		return m.Checksum
	}
	sum := sha256.Sum256(b)
	return "schema-sha256:" + hex.EncodeToString(sum[:])
}

// runChecksum is what schemaChecksum covers of m's run-once operations
// (nil when it has none, so the checksum of a migration without them is
// what it always was).
func runChecksum(m *Migration) bson.A {
	if len(m.Run) == 0 {
		return nil
	}
	var ops bson.A
	for _, op := range m.Run {
		d := bson.D{{Key: "kind", Value: string(op.Kind)}, {Key: "from", Value: op.From}, {Key: "to", Value: op.To},
			{Key: "name", Value: op.Name}, {Key: "allowNonEmpty", Value: op.AllowNonEmpty}}
		if x := op.Extract; x != nil {
			d = append(d, bson.E{Key: "extract", Value: bson.D{{Key: "from", Value: x.From}, {Key: "array", Value: x.Array},
				{Key: "to", Value: x.To}, {Key: "ref", Value: x.Ref}, {Key: "keep", Value: string(x.Keep)},
				{Key: "countField", Value: x.CountField}, {Key: "first", Value: x.First}}})
		}
		if op.Kind == RunGo {
			// The functions' names, not their code.
			d = append(d, bson.E{Key: "func", Value: op.Func}, bson.E{Key: "downFunc", Value: op.DownFunc})
		}
		if e := op.Embed; e != nil {
			fields := bson.A{}
			for _, f := range e.Copy.Fields {
				fields = append(fields, bson.D{{Key: "path", Value: f.Path}, {Key: "from", Value: f.From}})
			}
			d = append(d, bson.E{Key: "embed", Value: bson.D{{Key: "into", Value: e.Into}, {Key: "from", Value: e.From},
				{Key: "via", Value: e.Copy.Via}, {Key: "mode", Value: string(e.Copy.Mode)}, {Key: "fields", Value: fields}}})
		}
		ops = append(ops, d)
	}
	return ops
}
