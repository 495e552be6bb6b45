package cmddoc

import "fmt"

// RevertStoppedError is a revert that stopped part-way on Err: migration
// Version (File) stays recorded as applied, and a later down resumes it
// (the sibling of [PartialError], whose migration is not recorded). Its
// message says what was done and what is left; what the reader runs next
// is the caller's to word ([RevertStoppedError.Message]).
type RevertStoppedError struct {
	File    string
	Version int64
	// Done is what the revert did before it stopped, as the message says
	// it ("users: downgraded 3 documents"), "" when it says nothing.
	Done string
	// Left is what else stays as it was besides the ledger entry
	// ("nothing else was reverted"), "" when nothing is said.
	Left string
	// Resumes is how the next down resumes ("it resumes", "it continues
	// with the documents left"), "" when nothing is said.
	Resumes string
	Err     error
}

// Error words the next step as the library's fact: down resumes.
func (e *RevertStoppedError) Error() string { return e.Message("a later down resumes the revert") }

// Message is the error's message with next (what the reader does next)
// after "stays recorded: ".
func (e *RevertStoppedError) Message(next string) string {
	done, left, resumes := "", "", ""
	if e.Done != "" {
		done = e.Done + ", then: "
	}
	if e.Left != "" {
		left = e.Left + " and "
	}
	if e.Resumes != "" {
		resumes = " (" + e.Resumes + ")"
	}
	return fmt.Sprintf("revert %s: %s%v; %smigration %d stays recorded: %s%s", e.File, done, e.Err, left, e.Version, next, resumes)
}

func (e *RevertStoppedError) Unwrap() error { return e.Err }
