package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

func lintCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "lint",
		Usage: "check every migration file: format, numbering, $jsonSchema dialect (no database needed)",
		Description: "Exits 0 when the directory is valid (warnings allowed) and 2 when any file has an error.\n" +
			"Every problem is printed as file:line:column with a hint. --server URI also checks every validator\n" +
			"against the $jsonSchema keywords that server enforces (probed in a scratch database there, which is\n" +
			"dropped; nothing else is read or written): a validator using another is an error, as `up` refuses it.\n" +
			"A func step whose Go function this binary does not have is not checked, and said so (a warning;\n" +
			"an error with --require-funcs): lint with your team's binary (docs/deploying.md).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "server", Usage: "also check the validators against what the server at `URI` enforces"},
			&cli.BoolFlag{Name: requireFuncsFlag, Usage: "fail (exit 2) on a func step whose Go function this binary does not have, instead of warning that it was not checked"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return e.runLint(c.Context, parseLintFlags(c))
		},
	}
}

// lintOptions are lint's parsed flags.
type lintOptions struct {
	server string // --server URI ("": no server check)
	// requireFuncs: --require-funcs, a func step this binary lacks is an error.
	requireFuncs bool
}

func parseLintFlags(c *cli.Context) lintOptions {
	return lintOptions{server: c.String("server"), requireFuncs: c.Bool(requireFuncsFlag)}
}

func (e *env) runLint(ctx context.Context, o lintOptions) error {
	var missing []string
	check := func(rep *lint.Report, ms []*migration.Migration) error {
		missing = uncheckedFuncs(rep, ms, o.requireFuncs, e.cfg.VersionOptions)
		if o.server != "" {
			return e.lintServer(ctx, o.server, rep, ms)
		}
		return nil
	}
	err := lintDir(e.out, e.g, check, e.cfg.VersionOptions...)
	if err == nil || alreadyReported(err) {
		uncheckedNote(e.out, missing, o.requireFuncs)
	}
	return err
}

// lintDir lints --dir; server, when set, adds the problems of checking
// the files that parsed against a server.
func lintDir(o *output, g globals, server func(*lint.Report, []*migration.Migration) error, opts ...version.Option) error {
	fsys, err := migrationDir(g)
	if err != nil {
		return err
	}
	r, ms, err := lint.Load(fsys, opts...)
	if err != nil {
		return err
	}
	if server != nil {
		if err := server(r, ms); err != nil {
			return err
		}
	}
	adviseReport(r)
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

func renderLint(o *output, r *lint.Report) {
	for _, p := range r.Problems {
		sev := o.red("error")
		if p.Severity == lint.SeverityWarning {
			sev = o.yellow("warning")
		}
		o.printf("%s: %s: %s\n", o.bold(p.Location()), sev, p.Message)
		if p.Hint != "" {
			o.printf("    %s %s\n", o.faint("hint:"), p.Hint)
		}
	}
	n := filesChecked(r)
	summary := fmt.Sprintf("%s checked, %s, %s", count(n, "migration"), count(r.Errors, "error"), count(r.Warnings, "warning"))
	if r.OK() {
		o.printf("%s\n", o.green(summary))
	} else {
		o.printf("%s\n", o.red(summary))
	}
}

// migrationDir opens the --dir directory, with a clear error when it is
// missing, not a directory, unreadable, or holds no migration file (a
// wrong --dir must not let `up` or `status` succeed on nothing) unless
// --allow-empty. Files are read with the --max-file-size limit.
func migrationDir(g globals) (fs.FS, error) {
	dir := g.Dir
	shown := migration.DisplayName(dir)
	max, err := parseSize(g.MaxFileSize)
	if err != nil {
		return nil, usageError(err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, usageError(fmt.Errorf("migration directory %s: %w; pass --dir, or create the first migration with `mongomig create NAME`", shown, unwrapPathErr(err)))
	}
	if !st.IsDir() {
		return nil, usageError(fmt.Errorf("--dir %s is a file, not a directory", shown))
	}
	fsys := migration.WithLimits(os.DirFS(dir), migration.Limits{MaxFileSize: max})
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, usageError(fmt.Errorf("migration directory %s cannot be read: %w; give this user read and search permission on it (chmod u+rx), or pass --dir with another directory",
			shown, unwrapPathErr(err)))
	}
	if g.AllowEmpty {
		return fsys, nil
	}
	for _, ent := range entries {
		if !ent.IsDir() && migration.IsMigrationFile(ent.Name()) {
			return fsys, nil
		}
	}
	abs, _ := filepath.Abs(dir)
	return nil, usageError(fmt.Errorf("no migration files (NNNN_name.yaml, .yml or .json) in %s: pass --dir with your migration directory, "+
		"or create the first one with `mongomig create NAME`; --allow-empty accepts a directory with none", migration.DisplayName(abs)))
}

// parseSize reads --max-file-size: bytes, or a number with KiB or MiB;
// empty means migration.DefaultMaxFileSize.
func parseSize(s string) (int64, error) {
	if s == "" {
		return migration.DefaultMaxFileSize, nil
	}
	num, unit := strings.TrimSpace(s), int64(1)
	for suffix, u := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20} {
		if n, ok := strings.CutSuffix(num, suffix); ok {
			num, unit = strings.TrimSpace(n), u
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/unit {
		return 0, fmt.Errorf("--max-file-size %q: write a positive number of bytes, or one with KiB or MiB, such as 4MiB (the default is 1MiB)", s)
	}
	return n * unit, nil
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// filesChecked counts the migration files lint read: those that parsed
// and those with problems of their own (a directory-wide problem, such as
// an empty directory, names no file).
func filesChecked(r *lint.Report) int {
	files := map[string]bool{}
	for _, m := range r.Migrations {
		files[m.File] = true
	}
	for _, p := range r.Problems {
		if p.File != "" && p.File != "." {
			files[p.File] = true
		}
	}
	return len(files)
}
