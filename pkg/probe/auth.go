package probe

import (
	"errors"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/auth"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// Authentication error codes (src/mongo/base/error_codes.yml).
const (
	CodeAuthenticationFailed = 18
	CodeMechanismUnavailable = 334
)

// AuthFailure reports whether err is a failed authentication: the server
// refused the credentials (AuthenticationFailed) or the mechanism
// (MechanismUnavailable), or the driver's handshake failed in the
// mechanism's conversation (the driver's auth error). The server was
// reached: its address is not what to check.
func AuthFailure(err error) bool {
	if HasCode(err, CodeAuthenticationFailed, CodeMechanismUnavailable) {
		return true
	}
	var ae *auth.Error
	return errors.As(err, &ae)
}

// Unreachable reports whether err means that no server answered: a
// network error, or no server to select (connection refused, an unknown
// host, a timeout). An authentication failure is not one.
func Unreachable(err error) bool {
	if err == nil || AuthFailure(err) {
		return false
	}
	var sel topology.ServerSelectionError
	return mongo.IsNetworkError(err) || errors.As(err, &sel)
}
