package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sampledata"
	"github.com/mongomig/mongomig/migrations"
	"github.com/mongomig/mongomig/pkg/backfill"
	"github.com/mongomig/mongomig/pkg/runner"
)

func demoCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "walk through dry run, up, a lazy read, backfill and status on an embedded sandbox with sample data",
		Description: "Runs on the embedded sandbox only: --embedded DIR keeps its data in DIR (run it again to\n" +
			"see `nothing to apply`), otherwise a temporary directory is used and removed.",
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			if e.g.URI != "" {
				return usageError(errors.New("demo loads sample data and runs only on the embedded sandbox: drop --uri (add --embedded DIR to keep the data)"))
			}
			if e.cfg.Embedded == nil {
				return usageError(errNoEmbedded)
			}
			if e.g.Embedded == "" {
				dir, err := os.MkdirTemp("", "mongomig-demo-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				e.g.Embedded = dir
			}
			return e.runDemo(c.Context, demoOptions{})
		},
	}
}

// demoOptions: demo has no flags of its own (--embedded names its
// sandbox; the Action gives it a temporary one otherwise).
type demoOptions struct{}

func (e *env) runDemo(ctx context.Context, _ demoOptions) error {
	o := e.out
	s, err := e.open(ctx, openOptions{}, migrations.FS)
	if err != nil {
		return err
	}
	defer s.close()
	step := func(n int, title string) { o.printf("\n%s\n", o.bold(fmt.Sprintf("%d. %s", n, title))) }

	o.printf("%s an embedded MongoDB-compatible sandbox (FerretDB) in %s, database %q,\nwith the sample migrations of a small shop and blog (users, orders, posts, comments).\n",
		o.bold("mongomig demo:"), e.g.Embedded, s.db.Name())

	step(1, "Sample data, written before mongomig existed (version 0)")
	n, err := s.db.Collection("users").CountDocuments(ctx, bson.D{})
	if err != nil {
		return err
	}
	fresh, err := demoDatabase(ctx, s.db, e.g.Embedded)
	if err != nil {
		return err
	}
	if fresh {
		counts, err := sampledata.Load(ctx, s.db, 1)
		if err != nil {
			return err
		}
		o.printf("   loaded %d users, %d orders, %d posts, %d comments\n", counts.Users, counts.Orders, counts.Posts, counts.Comments)
	} else {
		o.printf("   the sandbox already holds data (%d users): reusing it\n", n)
	}

	step(2, "mongomig up --dry-run: the exact commands, and which documents the new validators would reject")
	if err := e.dryRun(ctx, s, runner.Latest, reportSettings{format: "text"}); err != nil && exitCode(err) != ExitCheck {
		return err
	} else if err != nil {
		o.printf("\n   In CI this dry run exits 3: documents would fail validators whose action is error.\n" +
			"   validationLevel moderate lets those existing documents stay, so the demo goes on; in\n" +
			"   production, fix them (or their upgrades) first.\n")
	}

	step(3, "mongomig up: apply, under the lock, exactly once")
	up, err := s.runner.Up(ctx)
	if err != nil {
		return err
	}
	applied := up.Applied
	if len(applied) == 0 {
		o.printf("   nothing to apply\n")
	}
	for _, a := range applied {
		o.printf("   %s %s (%s)\n", o.green("applied"), a.File, count(len(a.Commands), "command"))
	}

	step(4, "A lazy read: the application upgrades an old document when it reads it")
	if err := e.demoLazyRead(ctx, s); err != nil {
		return err
	}

	step(5, "mongomig backfill: upgrade the rest in the background, resumably (on MongoDB, never overwriting a concurrent write)")
	o.printf("   Until now the validators accept older versions (the window) until a backfill proves none remain.\n")
	res, err := backfill.Run(ctx, s.runner, backfill.Options{})
	if err != nil {
		return err
	}
	e.renderBackfill(res)
	if ctx.Err() != nil {
		return ctx.Err() // interrupted: stop here (the sandbox is about to be removed)
	}
	if res.FailuresRemain() {
		o.printf("\n   Some documents cannot be upgraded into valid ones (the sample's deliberately invalid users and\n" +
			"   order): backfill leaves them at their version, exits 1 and lists them. A team fixes them (or the\n" +
			"   upgrade); the demo fixes them now and runs backfill again.\n")
		if err := sampledata.FixInvalid(ctx, s.db); err != nil {
			return err
		}
		if res, err = backfill.Run(ctx, s.runner, backfill.Options{}); err != nil {
			return err
		}
		e.renderBackfill(res)
	}

	step(6, "mongomig up again: nothing pending, and the windows close")
	again, err := s.runner.Up(ctx)
	if err != nil {
		return err
	}
	if t := again.Tightened; t != nil {
		for _, c := range t.Commands {
			o.printf("   %s the validator window of %s\n", o.green("closed"), c.Collection)
		}
	}
	if again.Tightened == nil && len(again.Applied) == 0 {
		o.printf("   nothing to do\n")
	}

	step(7, "mongomig status")
	st, err := s.runner.Status(ctx)
	if err != nil {
		return err
	}
	e.renderStatus(st)
	o.printf("\nNext: docs/lazy-upgrades.md (application code), docs/deploying.md (pipelines),\n" +
		"docs/backfill.md (backfill and the validator window), docs/reports.md (CI reports).\n")
	return nil
}

func (e *env) demoLazyRead(ctx context.Context, s *session) error {
	o := e.out
	var raw bson.Raw
	err := s.db.Collection("users").FindOne(ctx, bson.D{{Key: "_id", Value: sampledata.ID("users", 0)}}).Decode(&raw)
	if err != nil {
		return fmt.Errorf("read a sample user: %w", err)
	}
	up, changed, err := s.runner.Registry().UpgradeRaw("users", raw)
	if err != nil {
		return err
	}
	o.printf("   stored:   %s\n", raw.String())
	if changed {
		o.printf("   upgraded: %s\n", bson.Raw(up).String())
		o.printf("   (in application code: registry.UpgradeRaw(\"users\", raw); the stored document is unchanged)\n")
	} else {
		o.printf("   the document is already current\n")
	}
	return nil
}

// demoMarker is the collection a demo creates before it loads the sample
// data: a directory holding it is one a demo made, and may be reused.
const demoMarker = "mongomig_demo"

// demoDatabase marks an empty database as the demo's (fresh: load the
// sample data) or accepts one a demo marked before. It refuses a database
// holding anything else: the demo changes the data it finds (up,
// backfill, fixing invalid documents), so it never runs on data it did not
// load.
func demoDatabase(ctx context.Context, db *mongo.Database, dir string) (fresh bool, err error) {
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return false, fmt.Errorf("list the sandbox's collections: %w", err)
	}
	if slices.Contains(names, demoMarker) {
		return false, nil
	}
	// Other databases of the directory count too: --db elsewhere, then
	// demo, would put the demo's data beside a team's.
	dbs, err := db.Client().ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		return false, fmt.Errorf("list the sandbox's databases: %w", err)
	}
	for _, d := range dbs {
		if d != db.Name() && d != "admin" && d != "local" && d != "config" {
			names = append(names, d+".*")
		}
	}
	if len(names) > 0 {
		slices.Sort(names)
		return false, usageError(fmt.Errorf("%s holds data a demo did not load (%s): the demo changes the data it finds, so it runs only on an empty directory or one a previous demo made; use another --embedded directory, or none (a temporary one)",
			dir, strings.Join(names, ", ")))
	}
	if _, err := db.Collection(demoMarker).InsertOne(ctx, bson.D{{Key: "_id", Value: "demo"}, {Key: "note", Value: "made by mongomig demo, which may reuse this database"}}); err != nil {
		return false, fmt.Errorf("mark the sandbox as the demo's: %w", err)
	}
	return true, nil
}
