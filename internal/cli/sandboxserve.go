package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/fatih/color"
	"github.com/urfave/cli/v2"
)

// ServeFunc starts the embedded sandbox server for other processes,
// storing its data in dir (empty: a temporary directory, removed on stop)
// and listening on addr (host:port, port 0 a free one), and returns its
// connection string and how to stop it.
type ServeFunc func(ctx context.Context, dir, addr string) (uri string, stop func(context.Context) error, err error)

// errNoServe answers `sandbox serve` in a binary built without the sandbox.
var errNoServe = errors.New("this mongomig binary was built without the embedded sandbox, so it cannot serve one: " +
	"use the stock one, build yours with pkg/command/sandbox (sandbox.With), or start any MongoDB server and pass --uri")

func sandboxCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "sandbox",
		Usage: "serve an embedded sandbox server to other processes, and load your own documents into a server",
		Description: "`mongomig sandbox serve` runs the embedded sandbox (FerretDB) until SIGINT or SIGTERM and prints\n" +
			"its URI for an application, mongosh or a team's own mongomig binary to connect to;\n" +
			"`mongomig sandbox load` inserts Extended JSON lines (as mongoexport writes them) into any server.",
		Subcommands: []*cli.Command{sandboxServeCommand(e), sandboxLoadCommand(e)},
	}
}

func sandboxServeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the embedded sandbox until SIGINT or SIGTERM and print its URI",
		Description: "Serves the embedded sandbox on 127.0.0.1 (--port, default a free port) with its data in\n" +
			"--embedded DIR (created if missing; kept for the next serve or --embedded DIR), else in a temporary\n" +
			"directory removed when it stops. Prints the URI on stdout (`--json`: {uri, dir}) once it accepts\n" +
			"connections; connect with --uri URI/app (or any database name). SIGINT (Ctrl-C) or SIGTERM stops\n" +
			"it (exit 0). Exit codes: 0 stopped by a signal, 1 it could not start (the port is taken, say),\n" +
			"2 usage (a bad --port, or a binary without the sandbox), 4 another process serves DIR.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "port", Usage: "listen on 127.0.0.1:`PORT`", DefaultText: "a free port"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			o, err := parseServeFlags(c)
			if err != nil {
				return err
			}
			return e.runServe(c.Context, o)
		},
	}
}

// serveOptions are `sandbox serve`'s parsed flags.
type serveOptions struct {
	addr string // 127.0.0.1:PORT
}

func parseServeFlags(c *cli.Context) (serveOptions, error) {
	port := c.Int("port")
	if port < 0 || port > 65535 {
		return serveOptions{}, usageError(fmt.Errorf("--port %d: give a TCP port from 1 to 65535, or leave --port out for a free one", port))
	}
	return serveOptions{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}, nil
}

// serveResult is `sandbox serve --json`.
type serveResult struct {
	URI string `json:"uri"`
	Dir string `json:"dir,omitempty"`
}

func (e *env) runServe(ctx context.Context, o serveOptions) error {
	if e.cfg.Serve == nil {
		return usageError(errNoServe)
	}
	if e.g.URI != "" {
		return usageError(fmt.Errorf("sandbox serve starts a server of its own: drop %s (--embedded DIR names where it keeps its data)", e.g.URISource))
	}
	dir := e.g.Embedded
	created := false
	if dir != "" {
		var err error
		if created, err = e.checkSandboxDir(dir); err != nil {
			return err
		}
	}
	uri, stop, err := e.cfg.Serve(ctx, dir, o.addr)
	if err != nil {
		return fmt.Errorf("start the sandbox on %s: %w", o.addr, err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), embeddedStopTimeout)
		defer cancel()
		_ = stop(sctx)
	}()
	if created {
		fmt.Fprintf(e.out.err, "%s created the sandbox directory %s (a new, empty database)\n", paint(e.out.errColor, color.FgYellow, "note:"), dir)
	}
	if e.out.json {
		if err := e.out.writeJSON(serveResult{URI: uri, Dir: dir}); err != nil {
			return err
		}
	} else {
		e.out.printf("%s\n", uri)
	}
	where := "a temporary directory, removed when it stops"
	if dir != "" {
		where = dir
	}
	fmt.Fprintf(e.out.err, "serving the embedded sandbox (data in %s); connect with --uri %s%s; Ctrl-C or SIGTERM stops it\n",
		where, strings.TrimSuffix(uri, "/"), "/"+sandboxDB)
	<-ctx.Done()
	fmt.Fprintf(e.out.err, "stopping the sandbox\n")
	return nil
}

// prepareSubcommands gives the subcommands of cmd (`sandbox serve`) what
// newApp gives every command: the global flags after them, usage errors
// with "did you mean", and the running command's name ("sandbox serve").
func prepareSubcommands(e *env, cmd *cli.Command, noColorEnv bool) {
	for _, sub := range cmd.Subcommands {
		sub.OnUsageError = cmd.OnUsageError
		sub.Flags = append(sub.Flags, commandCopies()...)
		name := cmd.Name + " " + sub.Name
		sub.Before = func(c *cli.Context) error {
			e.init(c, noColorEnv)
			e.command = name
			return validateFlags(c)
		}
	}
}
