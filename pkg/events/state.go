package events

import "fmt"

// The declared state of the applied migrations, checked against the
// server by a holder that took over an expired migration lock, or that
// sent a command after losing it (a paused holder's late command may have
// undone another process's work).
type (
	// StateChecking: Why the state is checked (a takeover, a late send).
	StateChecking struct{ Why string }
	// StateDiffers: on Collection, What (the validator, its level or
	// action, index NAME) is Found on the server, not as Declared by the
	// applied migration From (0: none declares it).
	StateDiffers struct {
		Collection      string
		What            string
		Declared, Found string
		From            int64
	}
	// StateReasserted: a command was sent to put the declared state back.
	StateReasserted struct{ Collection, Summary string }
	// StateUnchecked: the state could not be checked (Why).
	StateUnchecked struct{ Why string }
	// StateMatches: every collection of the applied migrations is as
	// declared (after any re-assertion).
	StateMatches struct{ Collections int }
	// WindowHeld: the validator window of Collection could close and
	// stays open while older releases run (Message names them).
	WindowHeld struct{ Collection, Message string }
	// WindowReopened: a document below the current version was found
	// right after the window of Collection was closed (an old release's
	// write raced the collMod), so the window was sent again.
	WindowReopened struct {
		Collection string
		Version    int64 // the current document version
	}
)

func (StateChecking) Kind() string       { return "state.checking" }
func (StateDiffers) Kind() string        { return "state.differs" }
func (StateReasserted) Kind() string     { return "state.reasserted" }
func (StateUnchecked) Kind() string      { return "state.unchecked" }
func (StateMatches) Kind() string        { return "state.matches" }
func (WindowReopened) Kind() string      { return "window.reopened" }
func (StateChecking) Severity() Severity { return Notice }
func (StateDiffers) Severity() Severity  { return Warning }
func (StateReasserted) Severity() Severity {
	return Notice
}
func (StateUnchecked) Severity() Severity { return Warning }
func (StateMatches) Severity() Severity   { return Info }
func (WindowReopened) Severity() Severity { return Warning }
func (e StateChecking) String() string {
	return "checking the server's validators and indexes against the applied migrations: " + e.Why
}
func (e StateDiffers) String() string {
	from := "no applied migration declares it"
	if e.From != 0 {
		from = fmt.Sprintf("migration %d declares %s", e.From, e.Declared)
	}
	return fmt.Sprintf("%s: %s is %s on the server, but %s", e.Collection, e.What, e.Found, from)
}
func (e StateReasserted) String() string {
	return e.Collection + ": " + e.Summary + " (the declared state put back)"
}
func (e StateUnchecked) String() string {
	return "the server's validators and indexes were not checked against the applied migrations: " + e.Why
}
func (e StateMatches) String() string {
	return fmt.Sprintf("the server's validators and indexes match the applied migrations (%d collections)", e.Collections)
}
func (WindowHeld) Kind() string       { return "window.held" }
func (WindowHeld) Severity() Severity { return Warning }
func (e WindowHeld) String() string   { return e.Message }
func (e WindowReopened) String() string {
	return fmt.Sprintf("%s: a document below version %d was written while the validator window closed: the window is open again (run the backfill, then up)", e.Collection, e.Version)
}
