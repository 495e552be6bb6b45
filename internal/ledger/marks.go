package ledger

// The marks log ("<ledger>_marks", next to the ledger) keeps one document
// per mark: a migration recorded as applied, or its record removed, by
// hand (Runner.Mark), with its reason, by whom and when. Invariants:
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
//     above it is ([CheckMark]), so `up` never meets a pending file below
//     an applied one because of a mark.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/mongomig/mongomig/pkg/migration"
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

// ErrNoReason is a mark without a reason.
var ErrNoReason = errors.New("a mark needs a reason, kept in the ledger")

func (s *Store) marks() *mongo.Collection {
	return s.db.Collection(s.name+"_marks", options.Collection().SetWriteConcern(writeconcern.Majority()))
}

// CheckMark refuses, with a [*MarkError], a mark of migration v that
// changes nothing given the entries, has no file among ms (applied), or
// breaks the order (invariant 4).
func CheckMark(entries map[int64]Entry, ms []*migration.Migration, v int64, applied bool) error {
	_, isApplied := entries[v]
	var m *migration.Migration
	for _, o := range ms {
		if o.Version == v {
			m = o
		}
	}
	switch {
	case applied && isApplied:
		return &MarkError{Version: v, Reason: "it is already recorded as applied"}
	case !applied && !isApplied:
		return &MarkError{Version: v, Reason: "it is not recorded as applied"}
	case applied && m == nil:
		return &MarkError{Version: v, Reason: "no migration file has that number in this directory"}
	}
	if applied {
		for _, o := range ms {
			if _, ok := entries[o.Version]; !ok && o.Version < v {
				return &MarkError{Version: v, Reason: fmt.Sprintf("%s, below it, is not applied (apply or mark it first)", o.File)}
			}
		}
		return nil
	}
	for o, e := range entries {
		if o > v {
			return &MarkError{Version: v, Reason: fmt.Sprintf("migration %d (%s), above it, is applied (revert or mark it not applied first)", o, e.File)}
		}
	}
	return nil
}

// RecordMark writes mk to the log, then the ledger change (invariant 1):
// for a mark "applied", e, the entry of mk's migration (its Marked set
// here); for "not applied", the entry's removal.
func (s *Store) RecordMark(ctx context.Context, mk *Mark, e Entry) error {
	if err := fenced(ctx, func(ctx context.Context) error {
		_, err := s.marks().InsertOne(ctx, mk)
		return err
	}); err != nil {
		return fmt.Errorf("record the mark of migration %d: %w", mk.Version, err)
	}
	if !mk.Applied {
		return s.Forget(ctx, mk.Version)
	}
	e.Marked = mk
	if err := fenced(ctx, func(ctx context.Context) error {
		_, err := s.ledger().InsertOne(ctx, e)
		return err
	}); err != nil {
		return fmt.Errorf("record %s as applied in the ledger: %w", e.File, err)
	}
	return nil
}

// Marks lists the marks recorded, oldest first.
func (s *Store) Marks(ctx context.Context) ([]Mark, error) {
	cur, err := s.marks().Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "at", Value: 1}, {Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read the marks (%s_marks): %w", s.name, err)
	}
	out := []Mark{}
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("read the marks (%s_marks): %w", s.name, err)
	}
	return out, nil
}

// MarkAs records migration v of ms as applied (applied true: an entry
// with the file's checksums, as if up had applied it) or as not applied
// (its entry removed), with reason, by owner running toolVersion, under
// the migration lock ctx carries. It refuses with a [*MarkError], before
// writing anything, what [CheckMark] refuses.
func (s *Store) MarkAs(ctx context.Context, ms []*migration.Migration, v int64, applied bool, reason, owner, toolVersion string) (*Mark, error) {
	entries, err := s.Read(ctx)
	if err != nil {
		return nil, err
	}
	if err := CheckMark(entries, ms, v, applied); err != nil {
		return nil, err
	}
	mk := &Mark{Version: v, Applied: applied, Reason: reason, At: Now(ctx, s.db).UTC(), ToolVersion: toolVersion, By: Who(owner)}
	var e Entry
	if !applied {
		mk.File = entries[v].File
		return mk, s.RecordMark(ctx, mk, e)
	}
	for _, m := range ms {
		if m.Version == v {
			mk.File = m.File
			e = Entry{Version: m.Version, Name: m.Name, File: m.File, Checksum: m.Checksum, SchemaChecksum: migration.SchemaChecksum(m),
				AppliedAt: mk.At, AppliedBy: mk.By, ToolVersion: toolVersion}
		}
	}
	return mk, s.RecordMark(ctx, mk, e)
}
