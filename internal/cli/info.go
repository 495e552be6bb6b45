package cli

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/urfave/cli/v2"
)

func infoCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "info",
		Usage: "server version and topology, and which capabilities mongomig relies on are available",
		Description: "Probes validators (create/collMod with validator, read back), each $jsonSchema keyword, $jsonSchema\n" +
			"queries, pipeline updates, transactions and change streams in a scratch database that is dropped\n" +
			"afterwards; the target database is not touched.",
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return e.runInfo(c.Context, infoOptions{})
		},
	}
}

// infoOptions: info has no flags of its own (the global ones name the
// server).
type infoOptions struct{}

func (e *env) runInfo(ctx context.Context, _ infoOptions) error {
	db, closeDB, err := e.connect(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	r, err := probe.Probe(ctx, db)
	if err != nil {
		return err
	}
	if r.Server.FerretDBVersion == "unknown" && e.g.Embedded != "" {
		// Embedded FerretDB does not stamp its version; the module's is it.
		r.Server.FerretDBVersion = linkedModuleVersion("github.com/FerretDB/FerretDB")
	}
	if e.out.json {
		return e.out.writeJSON(r)
	}
	renderInfo(e.out, r)
	return nil
}

func renderInfo(o *output, r *probe.ServerReport) {
	s := r.Server
	server := "MongoDB " + s.Version
	switch s.FerretDBVersion {
	case "":
		if s.FerretDB2Version != "" {
			server = "FerretDB " + s.FerretDB2Version + ", reporting itself as MongoDB " + s.Version
		}
	case "unknown":
		server = "FerretDB (version unknown), reporting itself as MongoDB " + s.Version
	default:
		server = "FerretDB " + s.FerretDBVersion + ", reporting itself as MongoDB " + s.Version
	}
	topo := s.Topology
	if s.SetName != "" {
		topo += " " + s.SetName
	}
	o.printf("%-10s %s\n", o.bold("server"), server)
	o.printf("%-10s %s\n", o.bold("topology"), topo)
	o.printf("%-10s %s\n", o.bold("database"), r.Database)
	o.printf("%s\n", o.bold("capabilities"))
	caps := []struct {
		name string
		c    probe.Capability
	}{
		{"validators", r.Capabilities.Validators},
		{"$jsonSchema queries", r.Capabilities.JSONSchemaQueries},
		{"pipeline updates", r.Capabilities.PipelineUpdates},
		{"transactions", r.Capabilities.Transactions},
		{"guarded writes", r.Capabilities.GuardedWrites},
		{"create keeps options", r.Capabilities.CreateKeepsOptions},
		{"change streams", r.Capabilities.ChangeStreams},
	}
	for _, c := range caps {
		switch {
		case c.c.Available:
			o.printf("  %-20s %s\n", c.name, o.green("yes"))
		case c.c.NotPermitted:
			// Refused for lack of privileges: whether the server has it is unknown.
			o.printf("  %-20s %s  %s\n", c.name, o.yellow(fmt.Sprintf("not permitted (code %d)", c.c.Code)), o.faint(c.c.Reason))
		default:
			o.printf("  %-20s %s  %s\n", c.name, o.red("no"), o.faint(c.c.Reason))
		}
	}
	renderKeywords(o, &r.Capabilities.Keywords)
	switch v := r.Capabilities.Validators; {
	case v.NotPermitted:
		o.warnf("this user may not create validators here (code %d): grant it collMod and createCollection on the database, or mongomig will apply migrations without validators", v.Code)
	case !v.Available:
		o.warnf("this server does not enforce validators: mongomig will apply migrations without them and enforce schemas client-side only (lint, validate, pkg/version Validate)")
	default:
		if c := r.Capabilities.CreateKeepsOptions; !c.Available && !c.NotPermitted {
			o.warnf("on this server a validator sent with create does not exist (%s); collMod keeps it", c.Reason)
		}
		if k := r.Capabilities.Keywords; k.Known && len(k.Unsupported)+len(k.UnsupportedTypes) > 0 {
			o.warnf("this server does not enforce %s as MongoDB does: a validator that uses one is not enforced here, or refuses every write; up refuses such a validator before sending anything (rewrite it, or apply it client-side only with up --%s COLL), and lint --server checks for them", keywordList(&k), clientSideFlag)
		}
	}
}

// renderKeywords prints which $jsonSchema keywords the server enforces,
// with its answer for each it does not.
func renderKeywords(o *output, k *probe.KeywordSupport) {
	const name = "$jsonSchema keywords"
	switch {
	case !k.Known:
		o.printf("  %-20s %s  %s\n", name, o.yellow("unknown"), o.faint(k.Reason))
	case len(k.Answers) == 0:
		o.printf("  %-20s %s\n", name, o.green("all enforced"))
	default:
		o.printf("  %-20s %s\n", name, o.red("not enforced: "+keywordList(k)))
		for _, a := range k.Answers {
			o.printf("    %s\n", o.faint(a.Keyword+": "+a.Answer))
		}
	}
}

// keywordList names the unsupported keywords, then the aliases: "enum,
// anyOf and bsonType number, minKey".
func keywordList(k *probe.KeywordSupport) string {
	s := strings.Join(k.Unsupported, ", ")
	if len(k.UnsupportedTypes) > 0 {
		if s != "" {
			s += "; "
		}
		s += "bsonType " + strings.Join(k.UnsupportedTypes, ", ")
	}
	return s
}

// linkedModuleVersion is the version of a module linked into this binary,
// or "unknown".
func linkedModuleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				if d.Replace != nil && d.Replace.Version != "" {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}
