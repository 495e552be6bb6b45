package migration

import "go.mongodb.org/mongo-driver/v2/bson"

// ValidatorState is what the migrations below some version declare for a
// collection's validator: the last validator, level and action declared.
type ValidatorState struct {
	Validator bson.D
	Level     Level
	Action    Action
	// From is the migration that last declared the validator (0: none).
	From int64
}

// StateBefore is what the migrations of ms numbered below v declare for
// collection coll (ms in version order).
func StateBefore(ms []*Migration, coll string, v int64) ValidatorState {
	var s ValidatorState
	for _, m := range ms {
		if m.Version >= v {
			break
		}
		c := m.Collection(coll)
		if c == nil {
			continue
		}
		if c.Validator != nil {
			s.Validator, s.From = c.Validator, m.Version
		}
		if c.ValidationLevel != "" {
			s.Level = c.ValidationLevel
		}
		if c.ValidationAction != "" {
			s.Action = c.ValidationAction
		}
	}
	return s
}
