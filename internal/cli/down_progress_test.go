package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

// TestDownInterruptedDuringDocuments (trial findings 3 and 5): on a
// terminal, down's document pass shows a progress line after the sandbox's
// guard-scan warning; a signal after the first batch exits 130 with a
// message that counts the users already downgraded while 0003 stays
// applied, and the next down finishes the rest.
func TestDownInterruptedDuringDocuments(t *testing.T) {
	dir := sampleSandbox(t)
	if r := run(t, false, sandboxArgs(dir, "up")...); r.code != 0 {
		t.Fatalf("up: %s", r.stderr)
	}
	sandboxtest.InDir(t, dir, "app", func(db *mongo.Database) {
		docs := make([]any, 120)
		for i := range docs {
			docs[i] = bson.D{{Key: "name", Value: "u"}, {Key: "contact", Value: bson.D{{Key: "email", Value: fmt.Sprintf("u%d@x", i)}}}, {Key: "status", Value: "active"}, {Key: "version", Value: 3}}
		}
		if _, err := db.Collection("users").InsertMany(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
	})
	r := runInterrupted(t, 1, sandboxArgs(dir, "down", "--to", "2")...)
	all := r.stdout + r.stderr
	if r.code != ExitInterrupted {
		t.Fatalf("down interrupted: exit %d\n%s", r.code, all)
	}
	for _, want := range []string{
		"down downgrades 120 documents, each written filtered on _id",
		"each write scans its collection",
		"\r\033[Kusers: 50 of ",
		"\r\033[K", // the progress line is cleared before the error
		"0003_user_contact.yaml stopped while downgrading its documents and stays recorded as applied, but 50 users documents are already downgraded from version 3 to ",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("output lacks %q:\n%q", want, all)
		}
	}
	if i, j := strings.LastIndex(r.stderr, "docs/s"), strings.LastIndex(r.stderr, "\r\033[K"); j < i {
		t.Errorf("the progress line was not cleared:\n%q", r.stderr)
	}
	r = run(t, false, sandboxArgs(dir, "down", "--to", "2")...)
	if r.code != 0 || !strings.Contains(r.stdout, "reverted 0003_user_contact.yaml") || !strings.Contains(r.stdout, "the database is at version 2") {
		t.Fatalf("down again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
