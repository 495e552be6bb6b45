// Package enforce decides which validators the server is given. Some
// servers (DocumentDB, FerretDB 2, Amazon DocumentDB) accept a validator
// that uses a $jsonSchema keyword they do not implement and then refuse
// every write to the collection, where MongoDB refuses the validator at
// once. Before up (or its plan) sends anything, every validator it would
// send is checked against the keywords the server was probed to enforce
// (probe.ValidatorSupport, in a scratch database): one that uses a
// refused keyword stops the run ([Checker.Refused]), unless its
// collection was asked to be client-side only, in which case the server
// is given no validator for it ([Checker.ClientSide]). It reads nothing
// and sends nothing: pkg/runner probes the server and sends.
package enforce

import (
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/internal/cmddoc"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
)

// Checker decides for one run.
type Checker struct {
	// Migrations are the loaded migrations (for the positions refused
	// validators are named at).
	Migrations []*migration.Migration
	// ClientSide are the collections asked to be client-side only.
	AskedClientSide []string
	// Caps gives the server's validator capabilities; it is asked only
	// when a command sends a validator.
	Caps func() (*probe.Capabilities, error)
}

// Refused lists the validators cmds, the commands of migration version
// (file), send that the server does not enforce, but those of
// collections asked to be client-side only.
func (c *Checker) Refused(version int64, file string, cmds []cmddoc.Command) ([]probe.UnenforceableValidator, error) {
	var refused []probe.UnenforceableValidator
	for _, cmd := range cmds {
		v, ok := cmddoc.SentValidator(cmd)
		if !ok || len(v) == 0 {
			continue
		}
		caps, err := c.Caps()
		if err != nil {
			return nil, err
		}
		kws := probe.RefusedKeywords(v, &caps.Keywords)
		if len(kws) == 0 || c.Asked(cmd.Collection) {
			continue
		}
		uv := probe.UnenforceableValidator{Collection: cmd.Collection, Version: version, File: file, Keywords: kws}
		for _, m := range c.Migrations {
			if mc := m.Collection(cmd.Collection); m.Version == version && mc != nil {
				uv.Pos = mc.Pos
			}
		}
		refused = append(refused, uv)
	}
	return refused, nil
}

// Asked reports whether coll was asked to be client-side only.
func (c *Checker) Asked(coll string) bool { return slices.Contains(c.AskedClientSide, coll) }

// ClientSide is what is sent instead of cmd when cmd is a create or
// collMod with a validator the server does not enforce, for a collection
// asked to be client-side only: the collection without validator
// (create), or the server's validator removed (collMod, validator {}), so
// that the server holds none rather than an older one. ok is false for
// other commands (a validator the server enforces is sent, asked or not).
func (c *Checker) ClientSide(cmd cmddoc.Command) (sent cmddoc.Command, ok bool, err error) {
	v, ok := cmddoc.SentValidator(cmd)
	if !ok || len(v) == 0 || !c.Asked(cmd.Collection) {
		return cmddoc.Command{}, false, nil
	}
	caps, err := c.Caps()
	if err != nil || len(probe.RefusedKeywords(v, &caps.Keywords)) == 0 {
		return cmddoc.Command{}, false, err
	}
	if cmd.Name == "create" {
		return cmddoc.Create(cmd.Collection, nil), true, nil
	}
	return cmddoc.CollMod(cmd.Collection, bson.D{{Key: "validator", Value: bson.D{}}}), true, nil
}

// Replace puts in cmds, the commands of file (a migration's, or the
// validator window's tightening), what [Checker.ClientSide] sends
// instead of each, and returns a plan's note for each replaced.
func (c *Checker) Replace(file string, cmds []cmddoc.Command) ([]string, error) {
	var notes []string
	for j, cmd := range cmds {
		sent, ok, err := c.ClientSide(cmd)
		if err != nil {
			return notes, err
		}
		if ok {
			sent.Tighten = cmd.Tighten
			cmds[j] = sent
			notes = append(notes, fmt.Sprintf("%s: %s: the server does not enforce this validator's keywords: it is applied client-side only, as asked, and the server is given none (the ledger records it as client-side)", migration.DisplayName(file), cmd.Collection))
		}
	}
	return notes, nil
}
