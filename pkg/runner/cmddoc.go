package runner

import "github.com/mongomig/mongomig/internal/cmddoc"

// The command documents are internal/cmddoc's: it builds them, the runner
// sends them (the only package that does).
type (
	// Command is one database command a migration sends, exactly as sent.
	Command = cmddoc.Command
	// CommandResult is a command that ran and how it ended.
	CommandResult = cmddoc.CommandResult
	// Outcome is what became of one command.
	Outcome = cmddoc.Outcome
	// Direction is which way a run changes the database.
	Direction = cmddoc.Direction
	// PartialError is a migration that failed part-way: what was done,
	// what failed, what was not done, and how to recover.
	PartialError = cmddoc.PartialError
)

// Outcomes.
const (
	OutcomeOK         = cmddoc.OutcomeOK
	OutcomeSkipped    = cmddoc.OutcomeSkipped    // nothing to do (index already absent)
	OutcomeClientSide = cmddoc.OutcomeClientSide // the server refused the validator, or it was asked client-side only
)

// Directions.
const (
	DirectionUp   = cmddoc.DirectionUp
	DirectionDown = cmddoc.DirectionDown
)

var (
	createCommand        = cmddoc.Create
	collModCommand       = cmddoc.CollMod
	dropIndexCommand     = cmddoc.DropIndex
	createIndexCommand   = cmddoc.CreateIndex
	hasValidatorChange   = cmddoc.HasValidatorChange
	describeCommand      = cmddoc.Describe
	sentValidator        = cmddoc.SentValidator
	setsValidatorOptions = cmddoc.SetsValidatorOptions
	newCommand           = cmddoc.New
	validatorFields      = cmddoc.ValidatorFields
)
