package cli

import (
	"fmt"
	"strings"
)

// exitDoc is one exit code a command's --help lists, and when it is
// returned.
type exitDoc struct {
	code int
	when string
}

// exitCodes are the codes exitCode returns (exit.go): the only ones a
// --help may list.
var exitCodes = []int{ExitOK, ExitFailure, ExitUsage, ExitCheck, ExitLock, ExitInternal, ExitInterrupted}

// commonExits are the codes every command can return: a bad flag, a
// panic, a signal. exitHelp adds those a command does not word itself.
var commonExits = []exitDoc{
	{ExitUsage, "bad flags or arguments"},
	{ExitInternal, "internal error (a bug: please report it)"},
	{ExitInterrupted, "interrupted by SIGINT, SIGTERM or SIGHUP"},
}

// commandExits are the exit codes of the commands whose --help is
// written by exitHelp, beyond commonExits.
var commandExits = map[string][]exitDoc{
	"backfill": {
		{ExitOK, "done, or stopped at --max-time with no failure"},
		{ExitFailure, "documents that could not be upgraded remain (they are listed), or the backfill failed"},
		{ExitUsage, "bad flags, invalid files, an unknown --collection, or a func step this binary does not have"},
		{ExitCheck, "a step would discard stored data the file does not account for (nothing written: add discard: true or copy the data first)"},
		{ExitLock, "another backfill of the collection holds its lease past --lock-wait, or a live release knows only older versions (nothing written; --allow-old-releases)"},
		{ExitInterrupted, "stopped by SIGINT, SIGTERM or SIGHUP at a batch boundary: run backfill again to continue"},
	},
	"check": {
		{ExitOK, "every value the integrity rules cover is in line"},
		{ExitFailure, "failure (the server unreachable, say)"},
		{ExitUsage, "bad flags, invalid files, or an unknown --collection"},
		{ExitCheck, "values out of line (listed)"},
	},
	"repair": {
		{ExitOK, "done (values a snapshot or a report-only reference holds are listed, not fixed)"},
		{ExitFailure, "a write failed, or another failure"},
		{ExitUsage, "bad flags, invalid files, an unknown --collection, or --follow on a server without change streams"},
		{ExitLock, "another repair of the database holds its lease past --lock-wait (--follow: another follower holds its lease)"},
		{ExitInterrupted, "stopped by SIGINT, SIGTERM or SIGHUP (--follow: its normal end; the next one resumes from the stored token)"},
	},
	"status": {
		{ExitOK, "also with --check when nothing is pending, drifted or missing"},
		{ExitFailure, "failure (the server unreachable, say)"},
		{ExitUsage, "bad flags or invalid files"},
		{ExitCheck, "with --check when a migration is pending, drifted or missing, the server differs from what the applied migrations declare, or a collection holds an anomaly (documents above the applied version, below it after the window closed, or at a version no file knows)"},
	},
	"unlock": {
		{ExitOK, "done"},
		{ExitFailure, "the migration lock, or the lease NAME, is live (without --force), or a failure"},
		{ExitUsage, "bad flags, or a NAME one typo away from a lease that is held"},
	},
}

// exitHelp is the "Exit codes: ..." paragraph of a command's --help: the
// command's own codes, then the common ones it does not word, in order of
// code, wrapped to the width of the other help lines.
func exitHelp(command string) string {
	docs := append([]exitDoc(nil), commandExits[command]...)
	for _, c := range commonExits {
		if !hasExit(docs, c.code) {
			docs = append(docs, c)
		}
	}
	var parts []string
	for _, code := range exitCodes {
		for _, d := range docs {
			if d.code == code {
				parts = append(parts, fmt.Sprintf("%d %s", d.code, d.when))
			}
		}
	}
	return wrapHelp("Exit codes: "+strings.Join(parts, "; ")+".", 100)
}

func hasExit(docs []exitDoc, code int) bool {
	for _, d := range docs {
		if d.code == code {
			return true
		}
	}
	return false
}

// wrapHelp breaks s into lines of at most width bytes between words.
func wrapHelp(s string, width int) string {
	var b strings.Builder
	line := 0
	for i, w := range strings.Fields(s) {
		if i > 0 && line+1+len(w) > width {
			b.WriteString("\n")
			line = 0
		} else if i > 0 {
			b.WriteString(" ")
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}
