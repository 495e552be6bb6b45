package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

func lintCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "lint",
		Usage: "check every migration file: format, numbering, $jsonSchema dialect (no database needed)",
		Description: "Exits 0 when the directory is valid (warnings allowed) and 2 when any file has an error.\n" +
			"Every problem is printed as file:line:column with a hint.",
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return runLint(e.out, e.g.Dir, e.g.AllowEmpty, e.cfg.VersionOptions...)
		},
	}
}

func runLint(o *output, dir string, allowEmpty bool, opts ...version.Option) error {
	fsys, err := migrationDir(dir, allowEmpty)
	if err != nil {
		return err
	}
	r, err := runner.Lint(fsys, opts...)
	if err != nil {
		return err
	}
	if o.json {
		if err := o.writeJSON(r); err != nil {
			return err
		}
	} else {
		renderLint(o, r)
	}
	if !r.OK() {
		return silentExit(ExitUsage)
	}
	return nil
}

func renderLint(o *output, r *runner.LintReport) {
	for _, p := range r.Problems {
		sev := o.red("error")
		if p.Severity == runner.SeverityWarning {
			sev = o.yellow("warning")
		}
		o.printf("%s: %s: %s\n", o.bold(p.Location()), sev, p.Message)
		if p.Hint != "" {
			o.printf("    %s %s\n", o.faint("hint:"), p.Hint)
		}
	}
	summary := fmt.Sprintf("%d migration%s checked, %d error%s, %d warning%s",
		len(r.Migrations), plural(len(r.Migrations)), r.Errors, plural(r.Errors), r.Warnings, plural(r.Warnings))
	if r.OK() {
		o.printf("%s\n", o.green(summary))
	} else {
		o.printf("%s\n", o.red(summary))
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// migrationDir opens the --dir directory, with a clear error when it is
// missing, not a directory, or holds no migration file (a wrong --dir must
// not let `up` or `status` succeed on nothing) unless allowEmpty.
func migrationDir(dir string, allowEmpty bool) (fs.FS, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, usageError(fmt.Errorf("migration directory %s: %w; pass --dir, or create the first migration with `mongomig create NAME`", dir, unwrapPathErr(err)))
	}
	if !st.IsDir() {
		return nil, usageError(fmt.Errorf("--dir %s is a file, not a directory", dir))
	}
	fsys := os.DirFS(dir)
	if allowEmpty {
		return fsys, nil
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, usageError(fmt.Errorf("migration directory %s: %w", dir, unwrapPathErr(err)))
	}
	for _, ent := range entries {
		if !ent.IsDir() && migration.IsMigrationFile(ent.Name()) {
			return fsys, nil
		}
	}
	abs, _ := filepath.Abs(dir)
	return nil, usageError(fmt.Errorf("no migration files (NNNN_name.yaml, .yml or .json) in %s: pass --dir with your migration directory, "+
		"or create the first one with `mongomig create NAME`; --allow-empty accepts a directory with none", abs))
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
