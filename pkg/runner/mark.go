package runner

// Marks: the escape hatch. [Runner.Mark] records a migration as applied,
// or removes its record, without sending anything to the collections: for
// a migration whose commands were run by hand, or a server that can no
// longer repeat one (an orphaned index after a crash), where `up` would
// fail on every run.
//
// The marks log ("<ledger>_marks", next to the ledger) keeps one document
// per mark, with its reason, by whom and when. Invariants:
//
//  1. A mark is written only under the migration lock, fenced by it
//     (ledger write and log entry alike), with majority write concern.
//  2. The log is insert-only: a mark is never updated or removed, so it
//     stays readable after the ledger entry it concerns is gone (a mark
//     "not applied" removes that entry).
//  3. Nothing decides on the log: up, down and backfill read the ledger
//     alone. A ledger entry a mark wrote is an ordinary entry (the file's
//     checksums) with a `marked` field older releases ignore.
//  4. Marks keep the ledger's order: a migration is marked applied only
//     when every file below it is applied, and not applied only when none
//     above it is, so `up` never meets a pending file below an applied one
//     because of a mark.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/mongomig/mongomig/pkg/migration"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// Mark is one recorded mark: migration Version recorded as applied (or
// not) by hand, with the reason given.
type Mark struct {
	Version     int64     `bson:"version" json:"version"`
	File        string    `bson:"file,omitempty" json:"file,omitempty"`
	Applied     bool      `bson:"applied" json:"applied"`
	Reason      string    `bson:"reason" json:"reason"`
	At          time.Time `bson:"at" json:"at"`
	By          AppliedBy `bson:"by" json:"by"`
	ToolVersion string    `bson:"toolVersion" json:"toolVersion"`
}

// MarkError is a mark refused before anything was written.
type MarkError struct {
	Version int64
	Reason  string
}

func (e *MarkError) Error() string {
	return fmt.Sprintf("cannot mark migration %d: %s; nothing was recorded", e.Version, e.Reason)
}

// ErrNoReason is Mark called without a reason.
var ErrNoReason = errors.New("a mark needs a reason, kept in the ledger")

func (r *Runner) marks() *mongo.Collection {
	return r.db.Collection(r.cfg.ledger+"_marks", options.Collection().SetWriteConcern(writeconcern.Majority()))
}

// Mark records migration v as applied (applied true: a ledger entry with
// the file's checksums, as if up had applied it) or as not applied (its
// ledger entry removed), under the migration lock, sending nothing to the
// migrated collections; reason is kept with the mark. It refuses, with a
// [*MarkError], a migration already in that state, one without a file
// (applied), and a mark that would leave a pending file below an applied
// one (invariant 4).
func (r *Runner) Mark(ctx context.Context, v int64, applied bool, reason string) (*Mark, error) {
	if strings.TrimSpace(reason) == "" {
		return nil, ErrNoReason
	}
	var mk *Mark
	err := r.withLock(withCommand(ctx, "mark"), lockID, func(ctx context.Context) error {
		ledger, err := r.readLedger(ctx)
		if err != nil {
			return err
		}
		if err := r.checkMark(ledger, v, applied); err != nil {
			return err
		}
		mk = r.newMark(ctx, v, applied, reason)
		if applied {
			mk.File = r.migrationByVersion(v).File
		} else {
			mk.File = ledger[v].File
		}
		return r.writeMark(ctx, mk)
	})
	if err != nil {
		return nil, err
	}
	return mk, nil
}

// checkMark refuses a mark that changes nothing or breaks the order.
func (r *Runner) checkMark(ledger map[int64]LedgerEntry, v int64, applied bool) error {
	_, isApplied := ledger[v]
	m := r.migrationByVersion(v)
	switch {
	case applied && isApplied:
		return &MarkError{Version: v, Reason: "it is already recorded as applied"}
	case !applied && !isApplied:
		return &MarkError{Version: v, Reason: "it is not recorded as applied"}
	case applied && m == nil:
		return &MarkError{Version: v, Reason: "no migration file has that number in this directory"}
	}
	if applied {
		for _, o := range r.migrations {
			if _, ok := ledger[o.Version]; !ok && o.Version < v {
				return &MarkError{Version: v, Reason: fmt.Sprintf("%s, below it, is not applied (apply or mark it first)", o.File)}
			}
		}
		return nil
	}
	for o, e := range ledger {
		if o > v {
			return &MarkError{Version: v, Reason: fmt.Sprintf("migration %d (%s), above it, is applied (revert or mark it not applied first)", o, e.File)}
		}
	}
	return nil
}

func (r *Runner) newMark(ctx context.Context, v int64, applied bool, reason string) *Mark {
	host, _ := os.Hostname()
	who := ""
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	now, err := serverTime(ctx, r.db)
	if err != nil {
		now = time.Now()
	}
	return &Mark{Version: v, Applied: applied, Reason: reason, At: now.UTC(), ToolVersion: r.cfg.toolVersion,
		By: AppliedBy{Host: host, User: who, PID: os.Getpid(), Owner: r.cfg.owner}}
}

// writeMark writes the log entry, then the ledger change (invariant 1).
func (r *Runner) writeMark(ctx context.Context, mk *Mark) error {
	if err := fencedWrite(ctx, func(ctx context.Context) error {
		_, err := r.marks().InsertOne(ctx, mk)
		return err
	}); err != nil {
		return fmt.Errorf("record the mark of migration %d: %w", mk.Version, err)
	}
	if !mk.Applied {
		return r.forget(ctx, mk.Version)
	}
	m := r.migrationByVersion(mk.Version)
	e := LedgerEntry{
		Version: m.Version, Name: m.Name, File: m.File, Checksum: m.Checksum, SchemaChecksum: migration.SchemaChecksum(m),
		AppliedAt: mk.At, AppliedBy: mk.By, ToolVersion: r.cfg.toolVersion, Marked: mk,
	}
	if err := fencedWrite(ctx, func(ctx context.Context) error {
		_, err := r.ledger().InsertOne(ctx, e)
		return err
	}); err != nil {
		return fmt.Errorf("record %s as applied in the ledger: %w", m.File, err)
	}
	return nil
}

// Marks lists the marks recorded, oldest first.
func (r *Runner) Marks(ctx context.Context) ([]Mark, error) {
	cur, err := r.marks().Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "at", Value: 1}, {Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read the marks (%s_marks): %w", r.cfg.ledger, err)
	}
	out := []Mark{}
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("read the marks (%s_marks): %w", r.cfg.ledger, err)
	}
	return out, nil
}

// marksOf sets st's marks and each migration's mark.
func (r *Runner) marksOf(ctx context.Context, st *Status) error {
	marks, err := r.Marks(ctx)
	if err != nil {
		return err
	}
	if len(marks) > 0 {
		st.Marks = marks
	}
	for i, m := range st.Migrations {
		if e, ok := st.applied[m.Version]; ok && e.Marked != nil {
			st.Migrations[i].Marked = e.Marked
		}
	}
	return nil
}
