package runner

// MongoDB 8.1's validationAction errorAndLog and 9.0's validationLevel
// constraint: internal/lifecycle decides which declared settings the
// server lacks, internal/lifecycleplan probes (only when one is
// declared), and up (or its plan) refuses before anything is sent.

import "github.com/mongomig/mongomig/internal/lifecycle"

type (
	// UnsupportedSetting is one validation setting a pending migration
	// declares that the server (or this mongomig) cannot apply.
	UnsupportedSetting = lifecycle.UnsupportedSetting
	// UnsupportedSettingError is up (or its plan) refusing, before sending
	// anything, settings the server does not have.
	UnsupportedSettingError = lifecycle.UnsupportedSettingError
)
