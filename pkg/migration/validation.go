package migration

// The validation settings of MongoDB 8.1 and 9.0, accepted in a file and
// sent only where the server has them: up, down and their plans refuse
// them before anything is sent where a probe finds the server without
// them (pkg/probe, ValidationSettings), and lint refuses constraint with
// action warn, which the server refuses (docs/file-format.md, MongoDB 8.1
// and 9.0 validation).
const (
	// ActionErrorAndLog (MongoDB 8.1) refuses an invalid write, as error
	// does, and logs it, as warn does.
	ActionErrorAndLog Action = "errorAndLog"
	// LevelConstraint (MongoDB 9.0) guarantees every stored document is
	// valid: the server refuses to set it while an invalid document
	// exists, and refuses to change the validator while it is set, so a
	// later change lowers it first.
	LevelConstraint Level = "constraint"
)

// Levels and Actions list the settings a file may write, in
// documentation order.
var (
	Levels  = []string{string(LevelOff), string(LevelModerate), string(LevelStrict), string(LevelConstraint)}
	Actions = []string{string(ActionError), string(ActionWarn), string(ActionErrorAndLog)}
)
