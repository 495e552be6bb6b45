package downgrade

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/migration"
)

// DocumentChange counts documents a down moved from one version to another.
type DocumentChange struct {
	Collection string `json:"collection"`
	From       int64  `json:"from"`
	To         int64  `json:"to"`
	Count      int64  `json:"count"`
}

// DowngradedDocuments are the documents a revert stopped by an
// interruption had already downgraded, per collection: its migration
// stays recorded as applied while they are at the earlier version, and the
// next down continues with the documents left (it reads only those still
// at the migration's version).
type DowngradedDocuments struct {
	File        string
	Version     int64
	Collections []DowngradeCount
	// Finished: every collection's pass ended; it stopped reverting the
	// validators and indexes.
	Finished bool
}

// DowngradeCount is one collection's share of [DowngradedDocuments].
type DowngradeCount struct {
	DocumentChange
	// Left: documents still at From, as counted before the revert less
	// those downgraded (0 once the collection's pass finished).
	Left int64 `json:"left"`
}

func (d *DowngradedDocuments) String() string {
	parts := make([]string, len(d.Collections))
	for i, c := range d.Collections {
		parts[i] = fmt.Sprintf("%d %s documents are already downgraded from version %d to %d (%d left at %d)", c.Count, c.Collection, c.From, c.To, c.Left, c.From)
	}
	if d.Finished {
		return fmt.Sprintf("%s stopped after downgrading its documents and stays recorded as applied, but %s; the application meets them at the earlier version until the next down reverts the rest",
			d.File, strings.Join(parts, ", "))
	}
	return fmt.Sprintf("%s stopped while downgrading its documents and stays recorded as applied, but %s; the application meets both versions until the next down downgrades the documents left",
		d.File, strings.Join(parts, ", "))
}

// DowngradeError is a revert refused before anything changed because
// documents are at a version the migration cannot take them back from.
type DowngradeError struct {
	File       string
	Collection string
	Version    int64
	Count      int64
}

func (e *DowngradeError) Error() string {
	return fmt.Sprintf("cannot revert %s: %d %s documents are at version %d or above and the migration declares no downgrade for %s; add `downgrade:` steps to the file (allowed after applying: downgrades are not checksummed), or upgrade the code instead of reverting the schema; nothing was changed",
		e.File, e.Count, e.Collection, e.Version, e.Collection)
}

// stopped carries [DowngradedDocuments] up to the interruption error the
// runner builds (Downgraded).
type stopped struct {
	docs *DowngradedDocuments
	err  error
}

func (e *stopped) Error() string { return e.err.Error() }
func (e *stopped) Unwrap() error { return e.err }

// Stopped wraps err, the error of a revert of m whose context was
// cancelled after it downgraded docs (finished: every pass ended), so that
// [Downgraded] finds them; other errors pass unchanged.
func Stopped(ctx context.Context, m *migration.Migration, docs []DowngradeCount, finished bool, err error) error {
	if ctx.Err() == nil || len(docs) == 0 {
		return err
	}
	return &stopped{docs: &DowngradedDocuments{File: m.File, Version: m.Version, Collections: docs, Finished: finished}, err: err}
}

// Downgraded returns the documents an interrupted revert downgraded, if
// err (from [Stopped]) says so.
func Downgraded(err error) *DowngradedDocuments {
	var s *stopped
	if errors.As(err, &s) {
		return s.docs
	}
	return nil
}

// BackfillRunningError is a down refused, before anything changed,
// because a backfill of a collection it reverts held its lease for longer
// than the lock wait.
type BackfillRunningError struct {
	Collection string
	Lease      *lease.TimeoutError
}

func (e *BackfillRunningError) Error() string {
	return fmt.Sprintf("a backfill of %s is running (%v): down reverts its upgrades and waits for it to stop; nothing was reverted", e.Collection, e.Lease)
}

func (e *BackfillRunningError) Unwrap() error { return e.Lease }
