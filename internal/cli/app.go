package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/internal/suggest"
	"github.com/mongomig/mongomig/pkg/runner"
	"github.com/mongomig/mongomig/pkg/version"
)

// Version is the tool's version, set at build time with
// -ldflags "-X github.com/mongomig/mongomig/internal/cli.Version=v1.2.3";
// otherwise the module version from the build info, or "dev".
var Version = ""

func toolVersion() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return buildVersion(bi)
}

// buildVersion is the version a build records: the module's version (a
// tag, go install ...@v1.2.3, or the pseudo-version Go 1.24 and later
// stamp in a clone, v0.0.0-<time>-<revision>[+dirty]), else the VCS
// revision an older go command stamped, as "devel+<12 hex digits>", with
// "-dirty" when the tree had uncommitted changes; "dev" when neither is
// known (go run, go test, -buildvcs=false).
func buildVersion(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	v := "devel+" + rev[:min(12, len(rev))]
	if dirty {
		v += "-dirty"
	}
	return v
}

// globals are the flags every command shares.
type globals struct {
	URI      string
	DB       string
	Dir      string
	Embedded string
	// URISource and EmbeddedSource say who set URI and Embedded: the flag
	// or its environment variable.
	URISource, EmbeddedSource string
	// AllowEmpty accepts a migration directory without migration files.
	AllowEmpty bool
	// MaxFileSize is --max-file-size as written (empty: the default).
	MaxFileSize string
	JSON        bool
	NoColor     bool
}

// globalFlags are accepted before the command (with their environment
// variables and defaults) and, for convenience, after it too
// (`mongomig lint --dir x`). A flag given after the command wins.
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "uri", Usage: "MongoDB connection string", EnvVars: []string{"MONGOMIG_URI"}},
		&cli.StringFlag{Name: "db", Usage: "database name (default: the database in --uri)", EnvVars: []string{"MONGOMIG_DB"}},
		&cli.StringFlag{Name: "dir", Value: "./migrations", Usage: "migration directory", EnvVars: []string{"MONGOMIG_DIR"}},
		&cli.StringFlag{Name: "embedded", Usage: "run against an embedded sandbox server storing its data in `DIR` instead of --uri", EnvVars: []string{"MONGOMIG_EMBEDDED"}},
		&cli.StringFlag{Name: "max-file-size", Usage: "refuse migration files larger than `SIZE` (bytes, or with KiB or MiB; default 1MiB)", EnvVars: []string{"MONGOMIG_MAX_FILE_SIZE"}},
		&cli.BoolFlag{Name: "allow-empty", Usage: "accept a migration directory that holds no migration file (otherwise exit 2)", EnvVars: []string{"MONGOMIG_ALLOW_EMPTY"}},
		&cli.BoolFlag{Name: "json", Usage: "machine-readable output on stdout"},
		&cli.BoolFlag{Name: "no-color", Usage: "no colour (also when NO_COLOR is set)"},
	}
}

// commandCopies returns the global flags as a command declares them: no
// defaults and no environment variables, so they count only when written
// after the command.
func commandCopies() []cli.Flag {
	var out []cli.Flag
	for _, f := range globalFlags() {
		switch f := f.(type) {
		case *cli.StringFlag:
			// The copy shows the default and the variable it does not apply.
			out = append(out, &cli.StringFlag{Name: f.Name, Usage: withEnv(f.Usage, f.EnvVars), DefaultText: f.Value, Category: "global (also before the command)"})
		case *cli.BoolFlag:
			out = append(out, &cli.BoolFlag{Name: f.Name, Usage: withEnv(f.Usage, f.EnvVars), Category: "global (also before the command)"})
		}
	}
	return out
}

func withEnv(usage string, vars []string) string {
	if len(vars) == 0 {
		return usage
	}
	return usage + " [$" + strings.Join(vars, ", $") + "]"
}

// readGlobals resolves each global flag from the innermost context that
// set it on the command line, else the app's value (env var or default).
func readGlobals(c *cli.Context) globals {
	lineage := c.Lineage()
	setHere := func(ctx *cli.Context, name string) bool {
		for _, n := range ctx.LocalFlagNames() {
			if n == name {
				return true
			}
		}
		return false
	}
	// owner is the innermost context that set the flag on the command
	// line, else the outermost one that defines it: the app's global flag
	// set, which holds the environment variable or the default. (The very
	// last context of the lineage is urfave/cli's empty wrapper of the
	// caller's context.Context: reading a flag there gives "", which once
	// made the default --dir ./migrations vanish.)
	owner := func(name string) *cli.Context {
		for _, ctx := range lineage {
			if ctx.Command != nil && setHere(ctx, name) {
				return ctx
			}
		}
		for i := len(lineage) - 1; i >= 0; i-- {
			if lineage[i].Value(name) != nil {
				return lineage[i]
			}
		}
		return c
	}
	str := func(name string) string { return owner(name).String(name) }
	// source says where a flag's value came from, for messages.
	// (urfave/cli counts a flag set by its environment variable as set,
	// so the command line itself is read.)
	source := func(name, env string) string {
		if typed(c.App.Metadata, name) {
			return "--" + name
		}
		if _, ok := os.LookupEnv(env); ok {
			return env + " (set in the environment)"
		}
		return "--" + name
	}
	boolean := func(name string) bool { return owner(name).Bool(name) }
	return globals{
		URI:            str("uri"),
		DB:             str("db"),
		Dir:            str("dir"),
		Embedded:       str("embedded"),
		URISource:      source("uri", "MONGOMIG_URI"),
		EmbeddedSource: source("embedded", "MONGOMIG_EMBEDDED"),
		AllowEmpty:     boolean("allow-empty"),
		MaxFileSize:    str("max-file-size"),
		JSON:           boolean("json"),
		NoColor:        boolean("no-color"),
	}
}

// env is the state one invocation runs with.
type env struct {
	cfg     Config
	streams Streams
	out     *output
	g       globals
	// command is the running command's name (up, status, ...).
	command string
	// warnedClientSide: the client-side-only validator warning was given.
	warnedClientSide bool
	// notedTimeFence: the "ledger fenced by time only" note was given.
	notedTimeFence bool
	// timeFenceHeld: the note is due, before the first ledger write.
	timeFenceHeld bool
	// downProgress: down's progress line (see renderDownProgress).
	downProgress downProgress
}

// Config customises a mongomig binary (see pkg/command).
type Config struct {
	// VersionOptions are passed to every version registry the commands
	// build: version.WithFunc registers the Go functions of func steps.
	VersionOptions []version.Option
	// Embedded starts the in-process sandbox server for --embedded and
	// demo. The stock cmd/mongomig sets it; a team's binary leaves it nil
	// and so links no sandbox (--embedded and demo then say so, exit 2).
	Embedded EmbeddedFunc
	// Serve starts the sandbox for `mongomig sandbox serve` (see ServeFunc); nil leaves it out.
	Serve ServeFunc
}

// EmbeddedFunc starts an embedded MongoDB-compatible server storing its
// data in dir and returns its connection string and how to stop it.
type EmbeddedFunc func(ctx context.Context, dir string) (uri string, stop func(context.Context) error, err error)

// Run runs mongomig with args (without the program name) and returns the
// process exit code. It is the only place errors become exit codes.
func Run(ctx context.Context, args []string, s Streams, cfg Config) int {
	e := &env{streams: s, cfg: cfg}
	var unknown string
	app := newApp(e)
	app.Metadata = map[string]any{"args": args}
	app.CommandNotFound = func(_ *cli.Context, name string) { unknown = name }
	err := checkFlagValues(app, args)
	if err == nil {
		err = runRecovered(ctx, app, flagsFirst(app, args))
	}
	if err == nil && unknown != "" {
		err = usageError(unknownCommand(unknown, app))
	}
	var intr *runner.InterruptedError
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) && !errors.As(err, &intr) {
		// A read-only command, or one that reports its own progress
		// (backfill), stopped by SIGINT/SIGTERM: say so, not "context canceled".
		err = &exitError{code: ExitInterrupted, err: errors.New("interrupted before it finished: run it again (`backfill`, `repair` and `check --resume` go on from their stored progress; a command that only reads starts over)")}
	}
	if err != nil && !alreadyReported(err) {
		msg, stack := errorText(err, e.g.URI), ""
		var pe *panicError
		if errors.As(err, &pe) {
			msg, stack = pe.render(e.g.URI)
		}
		fmt.Fprintf(s.Err, "%s %s\n%s", paint(e.out != nil && e.out.errColor, color.FgRed, "mongomig:"), msg, stack)
		e.writeFailure(err, args)
	}
	return exitCode(err)
}

func newApp(e *env) *cli.App {
	_, noColorEnv := os.LookupEnv("NO_COLOR")
	var app *cli.App
	app = &cli.App{
		Name:    "mongomig",
		Usage:   "MongoDB schema migrations: validators, indexes and lazy document upgrades",
		Version: toolVersion(),
		Description: "Global flags may go before or after the command: mongomig --embedded .sandbox info.\n" +
			"Exit codes: 0 ok, 1 failure, 2 usage or invalid migration files, 3 pending/drift or failing documents,\n" +
			"4 lock not acquired, 70 internal error (a bug: please report it), 130 interrupted (SIGINT, SIGTERM, SIGHUP).\n" +
			"Each command's --help says which apply.",
		Writer:               e.streams.Out,
		ErrWriter:            e.streams.Err,
		HideHelpCommand:      false,
		Suggest:              true,
		EnableBashCompletion: false,
		ExitErrHandler:       func(*cli.Context, error) {}, // Main maps errors; nothing exits here
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return flagUsageError(c, app, err)
		},
		Flags: globalFlags(),
		Before: func(c *cli.Context) error {
			e.init(c, noColorEnv)
			return nil
		},
		Commands: []*cli.Command{
			upCommand(e),
			downCommand(e),
			statusCommand(e),
			lintCommand(e),
			createCommand(e),
			validateCommand(e),
			checkCommand(e),
			repairCommand(e),
			backfillCommand(e),
			unlockCommand(e),
			markCommand(e),
			bucketsCommand(e),
			infoCommand(e),
			demoCommand(e),
			initCommand(e),
			analyzeCommand(e),
			sandboxCommand(e),
		},
	}
	for _, cmd := range app.Commands {
		cmd.OnUsageError = app.OnUsageError
		cmd.Flags = append(cmd.Flags, commandCopies()...)
		cmd.Before = func(c *cli.Context) error {
			e.init(c, noColorEnv)
			e.command = c.Command.Name
			return validateFlags(c)
		}
		prepareSubcommands(e, cmd, noColorEnv)
	}
	return app
}

// init resolves the global flags for the running command and sets up the
// output accordingly.
func (e *env) init(c *cli.Context, noColorEnv bool) {
	e.g = readGlobals(c)
	e.out = &output{
		out:      e.streams.Out,
		err:      e.streams.Err,
		json:     e.g.JSON,
		color:    useColor(e.g.NoColor, noColorEnv, e.streams.OutIsTerminal),
		errColor: useColor(e.g.NoColor, noColorEnv, e.streams.ErrIsTerminal),
	}
}

// validateFlags refuses, as usage errors (exit 2) before anything
// starts, flag values that would otherwise fail later or do nothing.
func validateFlags(c *cli.Context) error {
	if err := checkFlagLimits(c); err != nil {
		return err
	}
	if hasFlag(c, "lock-lease") {
		if d := c.Duration("lock-lease"); d < time.Second {
			return usageError(fmt.Errorf("--lock-lease %v: give at least 1s (a crashed process's lock is taken over once its lease expires), such as 30s", d))
		}
	}
	if hasFlag(c, "lock-wait") {
		if d := c.Duration("lock-wait"); d < 0 {
			return usageError(fmt.Errorf("--lock-wait %v: give 0 (fail at once if the lock is held) or a positive duration such as 5m", d))
		}
	}
	if hasFlag(c, "sample") && c.IsSet("sample") && c.Int64("sample") == 0 {
		// validate's report scanned nothing and passed; init and analyze read everything.
		return usageError(errors.New("--sample 0: give a positive number of documents, or leave --sample out to read them all"))
	}
	return nil
}

// noArgs rejects positional arguments (a flag written without its dashes,
// say), which the command would otherwise ignore.
func noArgs(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usageError(fmt.Errorf("%s takes no arguments, got %q (`mongomig %s --help` lists its flags)",
			c.Command.Name, strings.Join(c.Args().Slice(), " "), c.Command.Name))
	}
	return nil
}

var errNoTarget = errors.New("no server: pass --uri (or set MONGOMIG_URI), or --embedded DIR for the embedded sandbox")

// typed reports whether the command line (kept in the app's metadata by
// Run) holds the flag --name (or -name, --name=value).
func typed(meta map[string]any, name string) bool {
	args, _ := meta["args"].([]string)
	for _, a := range args {
		if a == "--" {
			return false
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// unknownCommand names the closest command, if one is close.
func unknownCommand(name string, app *cli.App) error {
	var names []string
	for _, c := range app.Commands {
		names = append(names, c.Names()...)
	}
	if s, ok := suggest.Closest(name, names); ok {
		return fmt.Errorf("unknown command %q; did you mean %q? (`mongomig help` lists them all)", name, s)
	}
	return fmt.Errorf("unknown command %q; run `mongomig help` for the list", name)
}

// invalidFlagValue is urfave/cli's message for a flag value its type does
// not parse (`invalid value "abc" for flag -rate: parse error`).
var invalidFlagValue = regexp.MustCompile(`^invalid value (".*") for flag -+([^:]+): `)

// flagUsageError adds "did you mean" to urfave/cli's "flag provided but
// not defined: -x".
func flagUsageError(c *cli.Context, app *cli.App, err error) error {
	const prefix = "flag provided but not defined: "
	msg := err.Error()
	if m := invalidFlagValue.FindStringSubmatch(msg); m != nil {
		where := "mongomig"
		if c != nil && c.Command != nil && c.Command.Name != "" && c.Command.Name != app.Name {
			where = "mongomig " + c.Command.Name
		}
		return usageError(fmt.Errorf("--%s %s: not a value it takes (`%s --help` says what each flag takes)", m[2], m[1], where))
	}
	if !strings.HasPrefix(msg, prefix) {
		return usageError(err)
	}
	name := strings.TrimLeft(strings.TrimPrefix(msg, prefix), "-")
	flags := app.Flags
	where := "mongomig"
	if c != nil && c.Command != nil && c.Command.Name != "" && c.Command.Name != app.Name {
		flags = append(flags, c.Command.Flags...)
		where = "mongomig " + c.Command.Name
	}
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	if s, ok := suggest.Closest(name, names); ok {
		return usageError(fmt.Errorf("unknown flag --%s; did you mean --%s? (`%s --help` lists them)", name, s, where))
	}
	return usageError(fmt.Errorf("unknown flag --%s (`%s --help` lists the flags)", name, where))
}
