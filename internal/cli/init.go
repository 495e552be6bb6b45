package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/inspect"
	"github.com/mongomig/mongomig/pkg/migration"
)

func initCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "adopt an existing database: infer each collection's $jsonSchema and write the baseline migration",
		Description: "Reads every document (or --sample N) of each collection, infers the $jsonSchema they all\n" +
			"satisfy and lists the existing indexes, and writes the next migration file (0001_baseline.yaml\n" +
			"in an empty directory) with validationLevel moderate and validationAction warn: applying it\n" +
			"rejects no write. Comments in the file say what was observed. Only reads the database.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "collection", Usage: "infer only collection `C` (repeatable); default: every collection but system.* and mongomig_*"},
			&cli.Int64Flag{Name: "sample", Usage: "read `N` documents per collection: a uniform $sample, or the first N in _id order where the server has no $sample", DefaultText: "all"},
			&cli.IntFlag{Name: "enum-max", Value: inspect.DefaultEnumMax, Usage: "most distinct values a string field may have to get an enum (`N`; 0: no enums)"},
			&cli.StringFlag{Name: "validation-level", Value: "moderate", Usage: "validationLevel of the baseline: off, moderate or strict"},
			&cli.StringFlag{Name: "validation-action", Value: "warn", Usage: "validationAction of the baseline: warn or error"},
			&cli.StringFlag{Name: "out", Usage: "write the migration to `FILE` instead of the next numbered file in --dir"},
			&cli.IntFlag{Name: "examples", Usage: "give the first `N` documents of each collection as examples (real data: review before committing)", DefaultText: "none"},
			&cli.BoolFlag{Name: "allow-managed", Usage: "write a baseline even though the database's ledger records applied migrations"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			opts, err := parseInitFlags(c)
			if err != nil {
				return err
			}
			return e.runInit(c.Context, opts)
		},
	}
}

type initOptions struct {
	infer   inspect.InferOptions
	file    inspect.FileOptions
	out     string
	sample  int64
	managed bool
}

func parseInitFlags(c *cli.Context) (initOptions, error) {
	o := initOptions{out: c.String("out"), sample: c.Int64("sample"), managed: c.Bool("allow-managed")}
	if o.sample < 0 {
		return o, usageError(fmt.Errorf("--sample %d: give a positive number of documents", o.sample))
	}
	enumMax := c.Int("enum-max")
	switch {
	case enumMax < 0:
		return o, usageError(fmt.Errorf("--enum-max %d: give 0 (no enums) or a positive number", enumMax))
	case enumMax == 0:
		enumMax = -1 // inspect: negative disables
	case enumMax > inspect.MaxEnumMax:
		return o, usageError(fmt.Errorf("--enum-max %d: at most %d (an enum is a short list of labels)", enumMax, inspect.MaxEnumMax))
	}
	level, action := c.String("validation-level"), c.String("validation-action")
	if level != "off" && level != "moderate" && level != "strict" {
		return o, usageError(fmt.Errorf("--validation-level %q: use off, moderate or strict", level))
	}
	if action != "warn" && action != "error" {
		return o, usageError(fmt.Errorf("--validation-action %q: use warn or error", action))
	}
	if c.Int("examples") < 0 {
		return o, usageError(fmt.Errorf("--examples %d: give a number of documents", c.Int("examples")))
	}
	o.infer = inspect.InferOptions{Collections: c.StringSlice("collection"), Sample: o.sample, EnumMax: enumMax, Examples: c.Int("examples")}
	o.file = inspect.FileOptions{Level: migration.Level(level), Action: migration.Action(action)}
	return o, nil
}

// initResult is init's --json output.
type initResult struct {
	File string `json:"file"`
	*inspect.Inference
}

func (e *env) runInit(ctx context.Context, o initOptions) error {
	path := o.out
	if path == "" {
		if err := os.MkdirAll(e.g.Dir, 0o755); err != nil {
			return fmt.Errorf("create migration directory: %w", err)
		}
		next, width, err := nextVersion(e.g.Dir)
		if err != nil {
			return err
		}
		path = filepath.Join(e.g.Dir, fmt.Sprintf("%0*d_baseline.yaml", width, next))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create the directory of %s: %w", path, err)
	}
	if _, err := os.Stat(path); err == nil {
		return usageError(fmt.Errorf("%s already exists: init never overwrites a file; remove it or pass --out FILE", path))
	}
	db, closeDB, err := e.connect(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	managed, err := refuseManaged(ctx, db, o.managed)
	if err != nil {
		return err
	}
	if managed != "" {
		e.out.warnf("%s", managed)
	}
	o.infer.Progress = e.progress()
	inf, err := inspect.Infer(ctx, db, o.infer)
	if err != nil {
		return err
	}
	if len(inf.Collections) == 0 {
		return fmt.Errorf("database %s has no collection to infer a schema from (system.* and mongomig_* are left out); check --db", inf.Database)
	}
	data, err := inf.File(filepath.Base(path), o.file)
	if err != nil {
		return err
	}
	if err := checkBaseline(path, data, e.g.MaxFileSize); err != nil {
		return err
	}
	if err := writeNew(path, data); err != nil {
		return err
	}
	for _, w := range inf.Warnings {
		e.out.warnf("%s", w)
	}
	if w := dataWarning(path, inf.FromData); w != "" {
		e.out.warnf("%s", w)
	}
	if e.out.json {
		return e.out.writeJSON(initResult{File: path, Inference: inf})
	}
	e.renderInit(path, inf, o)
	return nil
}

func (e *env) renderInit(path string, inf *inspect.Inference, o initOptions) {
	out := e.out
	out.printf("%s %s (database %s)\n", out.green("wrote"), path, inf.Database)
	var rows [][]cell
	var mixed []string
	for _, c := range inf.Collections {
		read := count(c.Documents, "document")
		switch c.Read {
		case inspect.ReadSample:
			read = fmt.Sprintf("%d sampled of ~%d", c.Documents, c.Total)
		case inspect.ReadFirst:
			read = fmt.Sprintf("first %d of ~%d", c.Documents, c.Total)
		}
		note := ""
		switch {
		case c.Documents == 0 && len(c.Indexes) == 0:
			note = "empty, no index: left out"
		case c.Documents == 0:
			note = "empty: indexes only"
		}
		rows = append(rows, []cell{{text: display(c.Name)}, {text: read}, {text: count(len(c.Indexes), "index")},
			{text: count(len(c.MixedTypes), "mixed-type field")}, {text: note, paint: out.yellow}})
		for _, m := range c.MixedTypes {
			mixed = append(mixed, display(fmt.Sprintf("%s.%s: %s", c.Name, m.Path, describeMixed(m))))
		}
		for _, s := range c.SkippedIndexes {
			out.warnf("%s: index %s is not in the file: %s; declare it by hand if the files must create it", display(c.Name), display(s.Name), display(s.Reason))
		}
	}
	out.table("  ", rows)
	if len(mixed) > 0 {
		out.printf("\n%s (the schema accepts each type seen; decide per field: fix the outliers with an upgrade and\n"+
			"narrow bsonType in a later migration, or keep every type):\n", out.yellow("fields whose types mix"))
		for _, m := range mixed {
			out.printf("  %s\n", m)
		}
	}
	out.printf("\nnext: review %s, then `mongomig lint` and `mongomig up`.\n", path)
	if o.file.Action == "warn" {
		out.printf("validationAction warn: the server logs writes that fail the schema and rejects none;\n" +
			"once `mongomig validate` reports no failure, tighten to error in a new migration.\n")
	}
}

// describeMixed is "double 195, string 5 (string: id1, id2)": the counts,
// and example _ids of every type but the most frequent.
func describeMixed(m inspect.MixedType) string {
	var counts, examples []string
	for i, t := range m.Types {
		counts = append(counts, fmt.Sprintf("%s %d", t.Type, t.Count))
		if i > 0 {
			ids := make([]string, len(t.ExampleIDs))
			for j, id := range t.ExampleIDs {
				ids[j] = string(id)
			}
			examples = append(examples, fmt.Sprintf("%s: _id %s", t.Type, strings.Join(ids, ", ")))
		}
	}
	return strings.Join(counts, ", ") + " (" + strings.Join(examples, "; ") + ")"
}
