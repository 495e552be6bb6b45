package probe

import (
	"context"
	"errors"
	"regexp"
	"slices"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Server error codes mongomig reacts to.
const (
	CodeNamespaceNotFound     = 26
	CodeIndexNotFound         = 27
	CodeNamespaceExists       = 48
	CodeIndexOptionsConflict  = 85
	CodeIndexKeySpecsConflict = 86
)

func hasCode(err error, Codes ...int) bool {
	var se mongo.ServerError
	if !errors.As(err, &se) {
		return false
	}
	for _, c := range Codes {
		if se.HasErrorCode(c) {
			return true
		}
	}
	return false
}

// HasCode reports whether err is a server's answer with one of codes.
func HasCode(err error, codes ...int) bool {
	var se mongo.ServerError
	if !errors.As(err, &se) {
		return false
	}
	for _, c := range codes {
		if se.HasErrorCode(c) {
			return true
		}
	}
	return false
}

// ServerCode is the code the server gave a single write's error: its write
// error's (a bulk write's, or a single write's), or its command error's.
// FerretDB v1 answers a duplicate key of an update with the command error 1
// InternalError, and DocumentDB (FerretDB 2) a unique index build over
// documents that share a key ([DocumentDBUniqueBuild]): 11000 is given in
// their place; any other code 1 is internal to the server, not the
// document's: 0. 0 if err is not the server's answer.
func ServerCode(err error) int {
	var w mongo.WriteError
	if errors.As(err, &w) {
		return w.Code
	}
	var we mongo.WriteException
	if errors.As(err, &we) {
		if we.WriteConcernError != nil || len(we.WriteErrors) != 1 {
			return 0
		}
		return we.WriteErrors[0].Code
	}
	var ce mongo.CommandError
	if !errors.As(err, &ce) {
		return 0
	}
	if ce.Code == 1 {
		if FerretUniqueIndex.MatchString(ce.Message) || DocumentDBUniqueBuild.MatchString(ce.Message) {
			return CodeDuplicateKey
		}
		return 0
	}
	return int(ce.Code)
}

// Codes of a refused write.
const (
	CodeDuplicateKey              = 11000
	CodeDocumentValidationFailure = 121
)

// DocumentDBUniqueIndex matches DocumentDB's (FerretDB 2's) duplicate key
// message, code 11000 but not in MongoDB's "E11000 duplicate key error
// collection: <ns> index: <name> dup key: {...}" form: "Duplicate key
// violation on the requested collection: Index 'handle_1'". Its group is
// the index name.
var DocumentDBUniqueIndex = regexp.MustCompile(`^Duplicate key violation on the requested collection: Index '([^']+)'`)

// DocumentDBUniqueBuild matches DocumentDB's answer (code 1,
// InternalError) to a unique index build over documents that share a key:
// PostgreSQL's "could not create exclusion constraint" for the index's
// table constraint ("documents_rum_index_168"), which names no index.
var DocumentDBUniqueBuild = regexp.MustCompile(`^could not create exclusion constraint "[^"]*"`)

// FerretUniqueIndex matches FerretDB v1's duplicate key message.
var FerretUniqueIndex = regexp.MustCompile(`UNIQUE constraint failed: index '([^']+)'`)

// transientCodes are answers worth retrying as they are.
var transientCodes = []int{
	6,     // HostUnreachable
	7,     // HostNotFound
	43,    // CursorNotFound (a read resumes from the last _id)
	89,    // NetworkTimeout
	91,    // ShutdownInProgress
	189,   // PrimarySteppedDown
	9001,  // SocketException
	10107, // NotWritablePrimary
	11600, // InterruptedAtShutdown
	11602, // InterruptedDueToReplStateChange
	13435, // NotPrimaryNoSecondaryOk
	13436, // NotPrimaryOrSecondary
}

// Transient reports whether err is worth retrying as is: a network error, a
// server error labelled RetryableWriteError, or one of transientCodes. A
// cancelled or expired ctx is never transient.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if mongo.IsNetworkError(err) {
		return true
	}
	var se mongo.ServerError
	if !errors.As(err, &se) {
		return false
	}
	if se.HasErrorLabel("RetryableWriteError") {
		return true
	}
	for _, c := range transientCodes {
		if se.HasErrorCode(c) {
			return true
		}
	}
	return false
}

// Server error codes of a write statement that refuse the command rather
// than the statement's document: no other document would fare better, so
// the backfill stops instead of listing every document as failed.
var commandCodes = []int{
	13,    // Unauthorized
	50,    // MaxTimeMSExpired
	262,   // ExceededTimeLimit
	8000,  // AtlasError: Atlas's answer to an action the user may not take
	11601, // Interrupted
}

// RefusesDocument reports whether a write statement's error code says the
// server refused that statement's document (a duplicate key, a failed
// validator, a document grown too large): the document is a failure of
// the backfill and the other documents are written. 0 (no server code),
// transient codes (see transientCodes) and commandCodes do not.
func RefusesDocument(code int) bool {
	return code != 0 && !slices.Contains(transientCodes, code) && !slices.Contains(commandCodes, code)
}
