package runner

// EventKind names a step of a run.
type EventKind string

// Events the runner emits, in the order they happen.
const (
	EventLockWaiting    EventKind = "lock.waiting"    // another process holds the lock
	EventLockAcquired   EventKind = "lock.acquired"   //
	EventLockTakenOver  EventKind = "lock.takenOver"  // an expired lock was taken over
	EventLockReleased   EventKind = "lock.released"   //
	EventApplyStart     EventKind = "migration.start" // a migration begins
	EventCommand        EventKind = "command"         // a command succeeded
	EventCommandSkipped EventKind = "command.skipped" // a command was unnecessary (index already absent)
	EventClientSide     EventKind = "validator.clientSideOnly"
	EventDocuments      EventKind = "documents" // documents downgraded
	EventApplyDone      EventKind = "migration.done"
	// EventBackfillUnguarded: the server cannot evaluate a guarded write
	// without a scan nor apply it atomically (FerretDB v1), so backfill
	// writes are filtered on _id alone; Message says why, in one line.
	EventBackfillUnguarded EventKind = "backfill.unguarded"
	// EventDowngradeProgress: after every batch of down's document pass;
	// Count and Total are the collection's documents downgraded so far and
	// to downgrade (as counted before the revert), Message says so with
	// the rate and the time left, in one line.
	EventDowngradeProgress EventKind = "documents.progress"
	// EventDownGuardScans: the server evaluates down's guarded writes by
	// scanning the collection (FerretDB v1), so its document pass is slow;
	// sent once, before the pass. down keeps the guards: Message says why.
	EventDownGuardScans EventKind = "down.guardScans"
)

// Event is one thing that happened during a run.
type Event struct {
	Kind       EventKind `json:"event"`
	Version    int64     `json:"version,omitempty"`
	File       string    `json:"file,omitempty"`
	Collection string    `json:"collection,omitempty"`
	// Command is the command's name (create, collMod, createIndexes, ...).
	Command string `json:"command,omitempty"`
	// Count and Total: documents done and to do (progress events; Total
	// also on the guard-scan notice).
	Count int64 `json:"count,omitempty"`
	Total int64 `json:"total,omitempty"`
	// Message is a human-readable summary.
	Message string `json:"message"`
}
