package probe

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestChangeStreamErrors: the answers a follower sorts when it opens or
// reads its stream. ChangeStreamHistoryLost (286) and InvalidResumeToken
// (260), MongoDB's answers to a token it cannot resume from
// (src/mongo/base/error_codes.yml; document_source_change_stream.cpp), are
// a lost history, not a refusal; the two test servers' refusals (their
// exact answers, measured) are the missing capability; a network error or
// a cancellation is neither. (The error values are the driver's types, as
// the servers' replies decode into them: no server here has a history to
// lose.)
func TestChangeStreamErrors(t *testing.T) {
	lost := []error{
		mongo.CommandError{Code: 286, Name: "ChangeStreamHistoryLost", Message: "Resume of change stream was not possible, as the resume point may no longer be in the oplog."},
		mongo.CommandError{Code: 260, Name: "InvalidResumeToken", Message: "Attempting to resume a change stream using 'resumeAfter' is not allowed from an invalidate notification"},
	}
	for _, err := range lost {
		if !ChangeStreamHistoryLost(err) || !ChangeStreamHistoryLost(fmt.Errorf("getMore: %w", err)) {
			t.Errorf("%v: not a lost history", err)
		}
		if _, refused := ChangeStreamRefusal(err); refused {
			t.Errorf("%v: a refusal", err)
		}
	}
	for _, err := range []error{
		mongo.CommandError{Code: 9, Name: "FailedToParse", Message: "Invalid command format: the 'aggregate' field must specify a collection name or 1"},
		mongo.CommandError{Code: 115, Name: "CommandNotSupported", Message: "Stage $changeStream is not supported yet in native pipeline"},
		mongo.CommandError{Code: 238, Name: "NotImplemented", Message: "`aggregate` stage \"$changeStream\" is not implemented yet"},
	} {
		c, refused := ChangeStreamRefusal(err)
		if !refused || c.Available || !strings.Contains(c.Reason, "change stream refused") {
			t.Errorf("%v: %+v, %v; want a refusal with the server's answer", err, c, refused)
		}
		if ChangeStreamHistoryLost(err) {
			t.Errorf("%v: a lost history", err)
		}
	}
	for _, err := range []error{context.Canceled, mongo.CommandError{Code: 91, Name: "ShutdownInProgress"}, nil} {
		if _, refused := ChangeStreamRefusal(err); refused || ChangeStreamHistoryLost(err) {
			t.Errorf("%v: sorted as a refusal or a lost history", err)
		}
	}
}
