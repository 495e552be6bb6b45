package backfill

import (
	"errors"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/pkg/probe"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestWriteFailureWording: a refused write's group names the index, never
// the value (the message quotes at most an excerpt of it), and the codes
// that refuse the command, not the document, stop the backfill instead.
func TestWriteFailureWording(t *testing.T) {
	// MongoDB's message as buildDupKeyErrorStatus
	// (src/mongo/db/storage/index_entry_comparison.cpp) writes it.
	mongoDup := mongo.WriteError{Code: 11000, Message: `E11000 duplicate key error collection: app.users index: contact.email_1 dup key: { contact.email: "ada.lovelace0@example.com" }`}
	// FerretDB v1.24's answer to an update that duplicates a key.
	ferretDup := mongo.CommandError{Code: 1, Name: "InternalError", Message: "[msg_update.go:133 handler.(*Handler).updateDocument] constraint failed: UNIQUE constraint failed: index 'users_2d0ac8c4_contact.email_1' (2067)"}
	for _, tc := range []struct {
		err            error
		rule, key, msg string
	}{
		{mongoDup, "duplicate key", "same key as another document in unique index contact.email_1; it is not written", `unique index contact.email_1 (e.g. contact.email: "ada.lovelace0@examp…); it is not written`},
		{ferretDup, "duplicate key", "same key as another document in unique index contact.email_1; it is not written", "unique index contact.email_1; it is not written"},
		{mongo.WriteError{Code: 121, Message: "Document failed validation"}, "server validator", "validator refuses the upgraded document (DocumentValidationFailure)", "(DocumentValidationFailure); it is not written"},
		{mongo.WriteError{Code: 17419, Message: "Resulting document after update is larger than 16777216"}, "write refused", "(code 17419); it is not written", "(code 17419): Resulting document after update is larger than 16777216; it"},
	} {
		rule, key, msg := writeFailure("users", tc.err)
		if rule != tc.rule || !strings.Contains(key, tc.key) || !strings.Contains(msg, tc.msg) || strings.Contains(key, "ada") {
			t.Errorf("%v:\n rule %q, want %q\n key %q, want it to hold %q (and no value)\n msg %q, want it to hold %q", tc.err, rule, tc.rule, key, tc.key, msg, tc.msg)
		}
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{mongoDup, true},
		{ferretDup, true},
		{mongo.CommandError{Code: 1, Message: "database is locked"}, false}, // internal to the server
		{mongo.CommandError{Code: 13, Message: "not authorized"}, false},
		{mongo.WriteException{WriteErrors: []mongo.WriteError{{Code: 8000, Message: "user is not allowed to do action [update]"}}}, false},
		{mongo.WriteException{WriteErrors: []mongo.WriteError{{Code: 11600}}}, false}, // transient
		{mongo.WriteException{WriteErrors: []mongo.WriteError{{Code: 11000}}}, true},
		{mongo.WriteException{WriteErrors: []mongo.WriteError{{Code: 11000}}, WriteConcernError: &mongo.WriteConcernError{Code: 64}}, false},
		{errors.New("client-side"), false},
	} {
		if got := probe.RefusesDocument(probe.ServerCode(tc.err)); got != tc.want {
			t.Errorf("probe.RefusesDocument(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
