package lifecycle

import (
	"fmt"
	"strings"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// Refusal is one lifecycle command a plan cannot send.
type Refusal struct {
	Version    int64         `json:"version"`
	File       string        `json:"file"`
	Pos        migration.Pos `json:"pos"`
	Collection string        `json:"collection"`
	// Command is what would have been sent.
	Command string `json:"command"`
	Reason  string `json:"reason"`
}

// RefusedError is up (or its plan) refusing, before sending anything,
// lifecycle commands the server cannot carry out.
type RefusedError struct {
	Refusals []Refusal
}

func (e *RefusedError) Error() string {
	var lines []string
	for _, l := range e.Unwrap() {
		lines = append(lines, l.Error())
	}
	return strings.Join(lines, "\n")
}

// Unwrap is the message's lines, one error each (a header, then a
// refusal a line), so that a renderer can print them as lines.
func (e *RefusedError) Unwrap() []error {
	out := []error{fmt.Errorf("the server cannot apply %d collection lifecycle change(s); nothing was sent:", len(e.Refusals))}
	for _, r := range e.Refusals {
		out = append(out, fmt.Errorf("  %s:%d:%d: %s: %s: %s", r.File, r.Pos.Line, r.Pos.Column, r.Collection, r.Command, r.Reason))
	}
	return out
}

// Reason is why a command cannot be sent: refused (a change the server
// cannot make to what it holds), else the first of features the server
// lacks; "" when it can. caps is called (the runner probes, once) only
// when features are needed.
func Reason(refused string, features []string, caps func() (*probe.LifecycleSupport, error)) (string, error) {
	if refused != "" || len(features) == 0 {
		return refused, nil
	}
	c, err := caps()
	if err != nil {
		return "", err
	}
	for _, f := range features {
		if cp := c.Feature(f); !cp.Available {
			return "the server lacks " + f + ": " + cp.Reason, nil
		}
	}
	return "", nil
}

// Pos is where m declares what a command on coll (index: the index it
// builds, drops or changes, if any) sends.
func Pos(m *migration.Migration, coll, index string) migration.Pos {
	if m == nil {
		return migration.Pos{}
	}
	if v := m.View(coll); v != nil {
		return v.Pos
	}
	c := m.Collection(coll)
	if c == nil {
		return migration.Pos{}
	}
	if index != "" {
		for _, list := range [][]migration.Index{c.Indexes.Create, c.Indexes.Rebuild} {
			for _, idx := range list {
				if idx.Name == index {
					return idx.Pos
				}
			}
		}
		for _, ch := range c.Indexes.Change {
			if ch.Name == index {
				return ch.Pos
			}
		}
	}
	if c.Options != nil {
		return c.Options.Pos
	}
	return c.Pos
}

// Has reports whether m declares options, index changes, rebuilds, views
// or indexes that need a feature (TTL, hidden).
func Has(m *migration.Migration) bool {
	if len(m.Views) > 0 {
		return true
	}
	for _, c := range m.Collections {
		if c.Options != nil || len(c.Indexes.Change) > 0 || len(c.Indexes.Rebuild) > 0 {
			return true
		}
		for _, idx := range c.Indexes.Create {
			if idx.ExpireAfterSeconds != nil || idx.Hidden {
				return true
			}
		}
	}
	return false
}
