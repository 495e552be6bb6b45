package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/migration"
)

// schemaChecksum covers what `up` sends and how documents are upgraded:
// per collection the validator, level, action, upgrade steps and index
// changes. The revert-only and documentary parts (downgrade, examples,
// description, comments, formatting) are left out, so they may be added or
// corrected after a migration was applied without being drift.
func schemaChecksum(m *migration.Migration) string {
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
			creates = append(creates, createIndexCommand(c.Name, idx).Doc)
		}
		var drops bson.A
		for _, d := range c.Indexes.Drop {
			drops = append(drops, d.Name)
		}
		colls = append(colls, bson.D{
			{Key: "name", Value: c.Name}, {Key: "validator", Value: c.Validator},
			{Key: "validationLevel", Value: string(c.ValidationLevel)}, {Key: "validationAction", Value: string(c.ValidationAction)},
			{Key: "upgrade", Value: steps}, {Key: "create", Value: creates}, {Key: "drop", Value: drops},
		})
	}
	covered := bson.D{{Key: "version", Value: m.Version}, {Key: "collections", Value: colls}}
	if ops := runChecksum(m); ops != nil {
		covered = append(covered, bson.E{Key: "run", Value: ops})
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

// sameSchema reports whether a ledger entry still describes m: the file's
// bytes are unchanged, or at least what its schema checksum covers.
func sameSchema(e LedgerEntry, m *migration.Migration) bool {
	return e.Checksum == m.Checksum || (e.SchemaChecksum != "" && e.SchemaChecksum == schemaChecksum(m))
}

// acceptDrift records, with --allow-drift, the files as they are now for
// every drifted applied migration, so the next run without the flag does
// not refuse again. It is called under the lock.
func (r *Runner) acceptDrift(ctx context.Context) error {
	if !r.cfg.allowDrift {
		return nil
	}
	st, err := r.status(ctx, false)
	if err != nil {
		return err
	}
	var now time.Time
	for _, ms := range st.Migrations {
		if ms.State != StateDrifted {
			continue
		}
		m := r.migrationByVersion(ms.Version)
		if now.IsZero() {
			if now, err = serverTime(ctx, r.db); err != nil {
				return err
			}
		}
		set := bson.D{{Key: "$set", Value: bson.D{
			{Key: "checksum", Value: m.Checksum}, {Key: "schemaChecksum", Value: schemaChecksum(m)},
			{Key: "driftAcceptedAt", Value: now}, {Key: "driftAcceptedFrom", Value: ms.LedgerChecksum},
		}}}
		// A ledger write like record's: in the lease's transaction where
		// the server has them, after the fence elsewhere.
		if err := fencedWrite(ctx, func(ctx context.Context) error {
			_, err := r.ledger().UpdateOne(ctx, bson.D{{Key: "_id", Value: m.Version}}, set)
			return err
		}); err != nil {
			return fmt.Errorf("record the accepted edit of %s: %w", m.File, err)
		}
		r.cfg.log.Log(events.DriftAccepted{Version: m.Version, File: m.File})
	}
	return nil
}
