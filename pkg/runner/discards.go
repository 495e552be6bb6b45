package runner

import downgradewalk "github.com/mongomig/mongomig/internal/downgrade"

// What a revert cannot restore of the data m's upgrades discarded
// (internal/downgrade words it).
var (
	lostData = downgradewalk.Unrestorable
	lostNote = downgradewalk.UnrestorableNote
)
