package cli

import (
	"errors"
	"fmt"

	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// discardAdvice is what to do about a step that discards stored data the
// file does not account for.
const discardAdvice = "add `discard: true` to the step if the data may go, or copy it first (a copy or rename to another field in an earlier step of the same migration; docs/file-format.md)"

// renderDiscards prints what the pending migrations' steps would discard
// (up --dry-run): each step with its count and whether the file accounts
// for it.
func renderDiscards(o *output, ds []version.DiscardCount, refused *lint.Report) {
	if len(ds) == 0 {
		return
	}
	o.printf("\n%s\n", o.bold("stored data the pending migrations discard (counted on the documents below each migration's version)"))
	for _, d := range ds {
		label, note := o.green("ok"), ""
		switch {
		case d.Allowed:
			note = " (discard: true)"
		case d.Kept != nil:
			note = fmt.Sprintf(" (kept: %s %s to %s at line %d)", d.Kept.Op, d.Kept.Path, d.Kept.To, d.Kept.Pos.Line)
		case refusedAt(refused, d):
			label = o.red("REFUSED")
		case d.Discards():
			label, note = o.yellow("WARN"), " (not refused: the validator does not declare the field an array or a document; add `discard: true` to say it may go)"
		}
		o.printf("  %s %s  %s:%d:%d  %s %s %s%s\n", label, display(d.Collection), migration.DisplayName(d.File), d.Pos.Line, d.Pos.Column, d.Op, display(d.Path), display(d.Summary()), note)
	}
}

// refusedAt reports whether refused (lint.Discarding) names d's step.
func refusedAt(refused *lint.Report, d version.DiscardCount) bool {
	for _, p := range refused.Problems {
		if p.File == d.File && p.Line == d.Pos.Line && p.Column == d.Pos.Column {
			return true
		}
	}
	return false
}

// refuseDiscards is the dry run's answer when up would refuse a pending
// migration for the data it discards: the files are invalid for up (exit 2).
func refuseDiscards(refused *lint.Report) error {
	if refused.OK() {
		return nil
	}
	return &runner.InvalidFilesError{Report: refused}
}

// wordDiscard adds to a backfill refused for the data a step would discard
// what to do about it.
func wordDiscard(err error) error {
	var de *backfill.DiscardError
	if !errors.As(err, &de) {
		return err
	}
	return fmt.Errorf("%w; %s, then run `mongomig backfill` again", err, discardAdvice)
}

// warnUnrestorable says plainly, after a down, which data the reverted
// migration's upgrade discarded for good.
func warnUnrestorable(o *output, lost []migration.Discard) {
	for _, d := range lost {
		verb := "removed"
		if d.Op == migration.OpSet {
			verb = "replaced"
		}
		o.warnf("%04d %s %s from %s (%s:%d); down cannot restore them", d.Migration, verb, display(d.Path), display(d.Collection), migration.DisplayName(d.File), d.Pos.Line)
	}
}
