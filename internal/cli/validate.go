package cli

import (
	"context"
	"math"

	"github.com/urfave/cli/v2"
)

func validateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "report documents that fail (or would fail, after their pending upgrades) the current validators",
		Description: "Reads every document (or --sample N) of each collection with a validator, upgrades it as the\n" +
			"application would, checks it against the last validator the files declare, and groups the\n" +
			"failures by path and rule.\n" +
			"Exit codes: 0 no failing document (or only under validators whose action is warn), 1 failure,\n" +
			"2 invalid files or flags (an unknown --collection), or an upgrade's func step this binary does not\n" +
			"register, 3 documents fail a validator whose action is error.",
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "collection", Usage: "report only collection `C` (repeatable)"},
			allIDsFlag(),
		}, reportFlags()...),
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			opts, err := parseValidateFlags(c, e.g.JSON)
			if err != nil {
				return err
			}
			return e.runValidate(c.Context, opts)
		},
	}
}

// validateOptions are validate's parsed flags.
type validateOptions struct {
	collections []string // --collection ("": every collection with a validator)
	report      reportSettings
}

func parseValidateFlags(c *cli.Context, jsonFlag bool) (validateOptions, error) {
	rs, err := parseReportFlags(c, jsonFlag)
	if err != nil {
		return validateOptions{}, err
	}
	return validateOptions{collections: c.StringSlice("collection"), report: rs}, nil
}

func (e *env) runValidate(ctx context.Context, o validateOptions) error {
	colls, rs := o.collections, o.report
	s, err := e.open(ctx, openOptions{}, nil)
	if err != nil {
		return err
	}
	defer s.close()
	names := colls
	if len(names) == 0 {
		names = reportedCollections(s.runner.Migrations(), false)
	}
	if err := s.runner.Registry().CheckFuncs(names, math.MaxInt64); err != nil {
		return funcMissing(err, "validate", "check")
	}
	opts := rs.options(e.progress())
	opts.Collections = colls
	rp, err := e.reporter(s)
	if err != nil {
		return err
	}
	rep, err := rp.Validate(ctx, opts)
	if err != nil {
		return err
	}
	if err := e.writeReport(rep, rs); err != nil {
		return err
	}
	if rep.WouldReject {
		return silentExit(ExitCheck)
	}
	return nil
}
