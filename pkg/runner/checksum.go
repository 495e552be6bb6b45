package runner

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/migration"
)

// sameSchema reports whether a ledger entry still describes m: the file's
// bytes are unchanged, or at least what its schema checksum covers.
func sameSchema(e LedgerEntry, m *migration.Migration) bool {
	return e.Checksum == m.Checksum || (e.SchemaChecksum != "" && e.SchemaChecksum == migration.SchemaChecksum(m))
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
			{Key: "checksum", Value: m.Checksum}, {Key: "schemaChecksum", Value: migration.SchemaChecksum(m)},
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
