package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/runner"
)

// clientSideFlag is up's way to deploy a validator the server cannot
// enforce: client-side only, said so and recorded so.
const clientSideFlag = "client-side-validator"

func clientSideValidatorFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: clientSideFlag, Usage: "apply the validators of collection `COLL` that use $jsonSchema keywords the server does not enforce " +
		"client-side only: the server gets none, the ledger records them as client-side (repeat for several collections)"}
}

// checkClientSideFlag refuses a --client-side-validator collection no
// migration gives a validator (a typo would otherwise do nothing).
func checkClientSideFlag(colls []string, ms []*migration.Migration) error {
	var known []string
	for _, m := range ms {
		for _, mc := range m.Collections {
			if mc.Validator != nil && !slices.Contains(known, mc.Name) {
				known = append(known, mc.Name)
			}
		}
	}
	slices.Sort(known)
	for _, coll := range colls {
		if !slices.Contains(known, coll) {
			return usageError(fmt.Errorf("--%s %s: no migration declares a validator for %s (those that do: %s)", clientSideFlag, coll, coll, orNone(known)))
		}
	}
	return nil
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// wordUnenforceable words the runner's refusal of validators the server
// cannot enforce, with what to do (exit 2); other errors pass unchanged.
func wordUnenforceable(err error, verb string) error {
	var ue *runner.UnenforceableError
	var pe *runner.PartialError
	if !errors.As(err, &ue) || errors.As(err, &pe) {
		// Refused as it was about to be sent (the plan was checked before
		// the lock): the partial error says what was done.
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: the server does not enforce $jsonSchema keywords these validators use; nothing was sent:", verb)
	for _, v := range ue.Validators {
		where := migration.DisplayName(v.File)
		if v.Pos.IsValid() {
			where = fmt.Sprintf("%s:%d:%d", where, v.Pos.Line, v.Pos.Column)
		}
		if v.File == "" {
			where = "(validator window)"
		}
		fmt.Fprintf(&b, "\n  %s: %s: %s", where, v.Collection, strings.Join(v.Keywords, ", "))
	}
	b.WriteString("\nthis server would accept such a validator and then refuse every write to the collection, or not check it (`mongomig info` lists what it enforces).")
	var flags []string
	for _, c := range ue.Collections() {
		flags = append(flags, "--"+clientSideFlag+" "+c)
	}
	fmt.Fprintf(&b, "\nan open validator window sends the earlier migrations' schemas of a collection again, so a keyword may come from one of them."+
		"\nrewrite each without those keywords (enum on strings: a pattern such as \"^(a|b)$\"), "+
		"or pass %s to apply it client-side only: the server gets no validator for it, `mongomig validate` and the application check it, and the ledger records it as client-side", strings.Join(flags, " "))
	return usageError(errors.New(b.String()))
}

// lintServer adds to rep an error for each validator of ms that uses a
// $jsonSchema keyword the server at uri does not enforce (probed in a
// scratch database there; nothing else is touched).
func (e *env) lintServer(ctx context.Context, uri string, rep *lint.Report, ms []*migration.Migration) error {
	se := *e
	se.g.URI, se.g.URISource, se.g.Embedded = uri, "--server", ""
	if se.g.DB == "" {
		se.g.DB = "admin" // only its client is used: the probe works in a scratch database
	}
	db, closeDB, err := se.connect(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	caps, err := probe.ValidatorSupport(ctx, db)
	if err != nil {
		return err
	}
	if !caps.Keywords.Known {
		e.out.warnf("--server %s: which $jsonSchema keywords it enforces is unknown (%s): its validators are client-side only there, or unchecked", redactURI(uri), caps.Keywords.Reason)
		return nil
	}
	for _, v := range probe.Unenforceable(ms, &caps.Keywords) {
		rep.Problems = append(rep.Problems, lint.Problem{
			Severity: lint.SeverityError, File: v.File, Line: v.Pos.Line, Column: v.Pos.Column, Collection: v.Collection,
			Message: fmt.Sprintf("the validator of %s uses %s, which the server at %s does not enforce (it would accept the validator and then refuse every write, or not check it)",
				v.Collection, strings.Join(v.Keywords, ", "), redactURI(uri)),
			Hint: fmt.Sprintf("rewrite it without them in a new migration, or deploy it client-side only there: mongomig up --%s %s", clientSideFlag, v.Collection),
		})
		rep.Errors++
	}
	return nil
}

// warnClientSide names the validators up applied client-side only: those
// --client-side-validator asked for, and those the server refused or did
// not keep.
func (e *env) warnClientSide(clientSide, asked []string) {
	var byFlag, byServer []string
	for _, c := range slices.Sorted(slices.Values(clientSide)) {
		if slices.Contains(asked, c) {
			byFlag = append(byFlag, c)
		} else {
			byServer = append(byServer, c)
		}
	}
	if len(byFlag) > 0 {
		e.out.warnf("validators applied client-side only, as --%s asked (the server has none for them): %s", clientSideFlag, strings.Join(byFlag, ", "))
	}
	if len(byServer) > 0 {
		e.out.warnf("validators enforced client-side only (the server refused them or did not keep them): %s", strings.Join(byServer, ", "))
	}
}
