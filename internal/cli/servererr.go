package cli

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"github.com/mongomig/mongomig/pkg/probe"
)

// serverError is a connection that failed before any command ran: the
// server was unreachable, or it refused the credentials or the mechanism
// (auth). Server is the address as shown (credentials as ***), Mechanism
// the URI's authMechanism ("" when the driver negotiates one), Detail the
// driver's error as shown.
type serverError struct {
	Auth      bool
	Server    string
	Mechanism string
	Detail    string
	err       error
}

func (e *serverError) Error() string {
	if e.Auth {
		mech := "authMechanism, negotiated when the URI names none"
		if e.Mechanism != "" {
			mech = "authMechanism=" + e.Mechanism
		}
		return fmt.Sprintf("authentication to %s failed: %s; the server answered, so check the credentials (user name, password, authSource) and the mechanism (%s)", e.Server, e.Detail, mech)
	}
	return fmt.Sprintf("cannot reach %s: %s; check the address and that the server is running", e.Server, e.Detail)
}

func (e *serverError) Unwrap() error { return e.err }

// pingError words a failed first ping of the server at uri.
func pingError(uri string, err error) error {
	e := &serverError{Auth: probe.AuthFailure(err), Server: redactURI(uri), Detail: redactErr(err.Error(), uri), err: err}
	if cs, perr := connstring.Parse(uri); perr == nil {
		e.Mechanism = cs.AuthMechanism
	}
	return e
}
