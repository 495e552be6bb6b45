package state

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// A resumable check's progress (pkg/integrity, Options.Resumable):
// "$check$<rule>", one document per integrity rule `mongomig check
// --resume` has begun. A collection name never contains '$', so the key
// is no collection's checkpoint. It is written only by a check holding
// the integrity check lease (every write fenced by it), as a $set of
// its fields (invariant 1 of the checkpoints holds here too). LastID is
// the _id of the rule's collection up to which (inclusive) every finding
// was counted; OutOfLine counts them, Findings holds those the report
// keeps (at most the check's bound on findings, in _id order) and
// Truncated says some were left out. Done is set when the rule's walk
// finished (Checked and Method are then its row); [Store.ForgetCheck]
// removes them all once every rule is done, so the next check starts
// over.

// CheckProgress is the stored progress of one rule's check.
type CheckProgress struct {
	ID        string     `bson:"_id"`
	Rule      string     `bson:"rule"`
	LastID    any        `bson:"lastId"`
	OutOfLine int64      `bson:"outOfLine"`
	Findings  []bson.Raw `bson:"findings"`
	Truncated bool       `bson:"truncated"`
	Checked   int64      `bson:"checked"`
	Method    string     `bson:"method"`
	Done      bool       `bson:"done"`
	UpdatedAt time.Time  `bson:"updatedAt"`
}

// CheckKey is the _id of rule's check progress.
func CheckKey(rule string) string { return "$check$" + rule }

// CheckProgressOf reads rule's check progress: a new one when none was
// stored.
func (s *Store) CheckProgressOf(ctx context.Context, rule string) (CheckProgress, error) {
	p := CheckProgress{}
	err := s.c.FindOne(ctx, byID(CheckKey(rule))).Decode(&p)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return CheckProgress{ID: CheckKey(rule), Rule: rule}, nil
	}
	if err != nil {
		return p, fmt.Errorf("read the check progress of %s: %w", rule, err)
	}
	return p, nil
}

// SaveCheckProgress sets p's fields (fenced by the lease ctx carries),
// creating the document if needed.
func (s *Store) SaveCheckProgress(ctx context.Context, p *CheckProgress) error {
	p.UpdatedAt = time.Now()
	if p.Findings == nil {
		p.Findings = []bson.Raw{}
	}
	set := bson.D{
		{Key: "rule", Value: p.Rule}, {Key: "lastId", Value: p.LastID}, {Key: "outOfLine", Value: p.OutOfLine},
		{Key: "findings", Value: p.Findings}, {Key: "truncated", Value: p.Truncated}, {Key: "checked", Value: p.Checked},
		{Key: "method", Value: p.Method}, {Key: "done", Value: p.Done}, {Key: "updatedAt", Value: p.UpdatedAt},
	}
	err := fenced(ctx, func() error {
		_, err := s.c.UpdateOne(ctx, byID(p.ID), bson.D{{Key: "$set", Value: set}}, options.UpdateOne().SetUpsert(true))
		return err
	})
	if err != nil {
		return fmt.Errorf("save the check progress of %s: %w", p.Rule, err)
	}
	return nil
}

// checkBegun is the _id of the document a resumable check stores before
// any rule's progress and [Store.ForgetCheck] removes first: a rule's
// progress without it is a leftover of a removal that was cut (a kill
// during the one delete), not a stopped check's.
const checkBegun = "$check$"

// BeginCheck makes ready the progress of a resumable check (fenced by the
// lease ctx carries): a stopped check's is kept (resumed), and anything
// else, a cut removal's leftovers, removed.
func (s *Store) BeginCheck(ctx context.Context) (resumed bool, err error) {
	n, err := s.c.CountDocuments(ctx, byID(checkBegun))
	if err != nil {
		return false, fmt.Errorf("read the check progress: %w", err)
	}
	if n > 0 {
		return true, nil
	}
	if err := s.forgetPrefix(ctx, `^\$check\$`, "the check progress a cut removal left"); err != nil {
		return false, err
	}
	err = fenced(ctx, func() error {
		_, err := s.c.UpdateOne(ctx, byID(checkBegun), bson.D{{Key: "$set", Value: bson.D{{Key: "begunAt", Value: time.Now()}}}}, options.UpdateOne().SetUpsert(true))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("begin the check progress: %w", err)
	}
	return false, nil
}

// ForgetCheck removes every rule's check progress (a check that finished
// them all), the document [Store.BeginCheck] stored first.
func (s *Store) ForgetCheck(ctx context.Context) error {
	err := fenced(ctx, func() error {
		_, err := s.c.DeleteOne(ctx, byID(checkBegun))
		return err
	})
	if err != nil {
		return fmt.Errorf("remove the check progress: %w", err)
	}
	return s.forgetPrefix(ctx, `^\$check\$`, "the check progress")
}
