// Package ledger owns the ledger: one document per applied migration in
// the ledger collection (mongomig_migrations unless named otherwise), and
// the marks log next to it ("<ledger>_marks", marks.go). The runner
// decides when a migration is recorded or forgotten; every read and write
// of either collection is here. Invariants:
//
//  1. Every write is made under the migration lock the context carries
//     and fenced by it: in one transaction with the lease's token where
//     the server has transactions (a lease that is a [Transactor]), after
//     lease.Fence(ctx) elsewhere; always with majority write concern, so a
//     recorded migration survives a failover.
//  2. An entry is inserted once every command of its migration succeeded
//     (or a mark says it is applied), updated only by an accepted drift
//     ($set of checksum, schemaChecksum, driftAcceptedAt and
//     driftAcceptedFrom, never a whole document), and deleted when down
//     reverted it (or a mark says it is not applied).
//  3. Entries are read by older releases: a field's name and type never
//     change, and a field added later is omitempty and ignored by them
//     (schemaChecksum, clientSideValidators, marked).
//  4. An entry still describes a file while [SameSchema] holds: the file's
//     bytes are unchanged, or at least what its schema checksum covers.
package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
)

// Entry is the ledger's record of one applied migration.
type Entry struct {
	Version  int64  `bson:"_id" json:"version"`
	Name     string `bson:"name" json:"name"`
	File     string `bson:"file" json:"file"`
	Checksum string `bson:"checksum" json:"checksum"`
	// SchemaChecksum covers only what up sends and how documents are
	// upgraded (see migration.SchemaChecksum); empty in entries older than it.
	SchemaChecksum string    `bson:"schemaChecksum,omitempty" json:"schemaChecksum,omitempty"`
	AppliedAt      time.Time `bson:"appliedAt" json:"appliedAt"`
	DurationMS     int64     `bson:"durationMs" json:"durationMs"`
	AppliedBy      AppliedBy `bson:"appliedBy" json:"appliedBy"`
	ToolVersion    string    `bson:"toolVersion" json:"toolVersion"`
	// ClientSideValidators lists the collections whose validator the server
	// refused: mongomig enforces them client-side only.
	ClientSideValidators []string `bson:"clientSideValidators,omitempty" json:"clientSideValidators,omitempty"`
	// Marked: recorded by a mark, not by up (see Runner.Mark).
	Marked *Mark `bson:"marked,omitempty" json:"marked,omitempty"`
}

// AppliedBy identifies who applied a migration.
type AppliedBy struct {
	Host  string `bson:"host" json:"host"`
	User  string `bson:"user" json:"user"`
	PID   int    `bson:"pid" json:"pid"`
	Owner string `bson:"owner" json:"owner"`
}

// Store reads and writes one database's ledger and marks log.
type Store struct {
	db   *mongo.Database
	name string
}

// New returns the store of the ledger collection name in db.
func New(db *mongo.Database, name string) *Store { return &Store{db: db, name: name} }

func (s *Store) ledger() *mongo.Collection {
	// Majority write concern: a recorded migration survives a failover.
	// Servers without replication accept and ignore it.
	return s.db.Collection(s.name, options.Collection().SetWriteConcern(writeconcern.Majority()))
}

// Read returns the applied migrations by version.
func (s *Store) Read(ctx context.Context) (map[int64]Entry, error) {
	cur, err := s.ledger().Find(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("read ledger %s: %w", s.name, err)
	}
	var entries []Entry
	if err := cur.All(ctx, &entries); err != nil {
		return nil, fmt.Errorf("read ledger %s: %w (was the collection edited by hand?)", s.name, err)
	}
	out := make(map[int64]Entry, len(entries))
	for _, e := range entries {
		out[e.Version] = e
	}
	return out, nil
}

// Who is this process, applying migrations as owner.
func Who(owner string) AppliedBy {
	host, _ := os.Hostname()
	who := ""
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	return AppliedBy{Host: host, User: who, PID: os.Getpid(), Owner: owner}
}

// Now is the server's clock (see [lease.ServerTime]), or this machine's
// when the server does not answer.
func Now(ctx context.Context, db *mongo.Database) time.Time {
	now, err := lease.ServerTime(ctx, db)
	if err != nil {
		now = time.Now()
	}
	return now
}

// Record inserts e, the entry of a migration up applied (invariants 1
// and 2).
func (s *Store) Record(ctx context.Context, e Entry) error {
	if err := fenced(ctx, func(ctx context.Context) error {
		_, err := s.ledger().InsertOne(ctx, e)
		return err
	}); err != nil {
		if errors.Is(err, lease.ErrLost) {
			return fmt.Errorf("record %s: %w", e.File, err)
		}
		if mongo.IsDuplicateKeyError(err) {
			return fmt.Errorf("record %s in the ledger: another process recorded it while this one applied it (the lock was lost?): %w", e.File, err)
		}
		return fmt.Errorf("record %s in the ledger: %w; its changes are applied, so run `mongomig up` again to record it", e.File, err)
	}
	return nil
}

// Forget deletes the entry of migration v.
func (s *Store) Forget(ctx context.Context, v int64) error {
	if err := fenced(ctx, func(ctx context.Context) error {
		_, err := s.ledger().DeleteOne(ctx, bson.D{{Key: "_id", Value: v}})
		return err
	}); err != nil {
		return fmt.Errorf("remove migration %d from the ledger: %w", v, err)
	}
	return nil
}

// AcceptDrift records m's file as it is now in its entry, whose checksum
// was from, at now (--allow-drift): the next run without the flag does
// not refuse again.
func (s *Store) AcceptDrift(ctx context.Context, m *migration.Migration, from string, now time.Time) error {
	set := bson.D{{Key: "$set", Value: bson.D{
		{Key: "checksum", Value: m.Checksum}, {Key: "schemaChecksum", Value: migration.SchemaChecksum(m)},
		{Key: "driftAcceptedAt", Value: now}, {Key: "driftAcceptedFrom", Value: from},
	}}}
	// A ledger write like Record's: in the lease's transaction where
	// the server has them, after the fence elsewhere.
	if err := fenced(ctx, func(ctx context.Context) error {
		_, err := s.ledger().UpdateOne(ctx, bson.D{{Key: "_id", Value: m.Version}}, set)
		return err
	}); err != nil {
		return fmt.Errorf("record the accepted edit of %s: %w", m.File, err)
	}
	return nil
}

// SameSchema reports whether a ledger entry still describes m: the file's
// bytes are unchanged, or at least what its schema checksum covers.
func SameSchema(e Entry, m *migration.Migration) bool {
	return e.Checksum == m.Checksum || (e.SchemaChecksum != "" && e.SchemaChecksum == migration.SchemaChecksum(m))
}

// MaxApplied is the highest version of applied (0: none).
func MaxApplied(applied map[int64]Entry) int64 {
	var m int64
	for v := range applied {
		m = max(m, v)
	}
	return m
}

// Below is the highest version of applied below v (0: none): what a down
// of the last applied migration v reverts to.
func Below(applied map[int64]Entry, v int64) int64 {
	var m int64
	for a := range applied {
		if a < v {
			m = max(m, a)
		}
	}
	return m
}
