package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing/fstest"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/inspect"
	"github.com/mongomig/mongomig/pkg/lint"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/runner"
)

// refuseManaged refuses init on a database whose ledger records applied
// migrations: a second baseline would declare, as version 1 of another
// history, what the files already manage. --allow-managed lets it write
// one anyway (to compare, or to start over knowingly).
func refuseManaged(ctx context.Context, db *mongo.Database, allow bool) (string, error) {
	var last runner.LedgerEntry
	err := db.Collection(runner.DefaultLedgerCollection).FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}})).Decode(&last)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read the ledger %s: %w", runner.DefaultLedgerCollection, err)
	}
	n, err := db.Collection(runner.DefaultLedgerCollection).CountDocuments(ctx, bson.D{})
	if err != nil {
		return "", fmt.Errorf("read the ledger %s: %w", runner.DefaultLedgerCollection, err)
	}
	what := fmt.Sprintf("database %s is already managed by mongomig: its ledger (%s) records %s, the last %s",
		db.Name(), runner.DefaultLedgerCollection, count(n, "applied migration"), migration.DisplayName(last.File))
	if allow {
		return what + "; --allow-managed: writing a baseline anyway (do not apply it on this database)", nil
	}
	return "", usageError(fmt.Errorf("%s; init writes the baseline of a database mongomig does not manage yet, and wrote nothing: "+
		"run `mongomig status` to see the managed state and write the next change with `mongomig create NAME`, "+
		"or pass --allow-managed to write a baseline anyway", what))
}

// checkBaseline reads the bytes init is about to write as `mongomig lint`
// would (the same --max-file-size), so that init never leaves a file its
// own lint refuses: any error stops it before anything is written.
func checkBaseline(path string, data []byte, maxFileSize string) error {
	max, err := parseSize(maxFileSize)
	if err != nil {
		return usageError(err)
	}
	shown := migration.DisplayName(path)
	if int64(len(data)) > max {
		return fmt.Errorf("the baseline would be %d bytes, more than the limit of %d bytes that lint and up read, so init wrote nothing: "+
			"infer fewer collections per file (--collection C --out FILE, one file per group), or raise --max-file-size", len(data), max)
	}
	// (Checked under a fixed name: --out may name any file, and the
	// version number changes nothing in a lone file's checks.)
	const name = "0001_baseline.yaml"
	if _, err := migration.Parse(name, data); err != nil {
		return fmt.Errorf("the baseline for %s does not parse, so init wrote nothing (a bug in mongomig init: please report it): %w", shown, err)
	}
	fsys := migration.WithLimits(fstest.MapFS{name: &fstest.MapFile{Data: data}}, migration.Limits{MaxFileSize: max})
	rep, err := lint.Lint(fsys)
	if err != nil {
		return fmt.Errorf("lint the baseline for %s: %w", shown, err)
	}
	if rep.OK() {
		return nil
	}
	var lines []string
	for _, p := range rep.Problems {
		if p.Severity == lint.SeverityError && len(lines) < 5 {
			lines = append(lines, fmt.Sprintf("  line %d: %s", p.Line, p.Message))
		}
	}
	return fmt.Errorf("the baseline for %s fails lint with %s, so init wrote nothing (a bug in mongomig init: please report it; "+
		"--collection leaves the collection out meanwhile):\n%s", shown, count(rep.Errors, "error"), strings.Join(lines, "\n"))
}

// writeNew writes a file that must not exist yet, whole or not at all: the
// bytes go to a temporary file in the same directory, which is then
// hard-linked to path (failing if path exists, even if another process
// raced us) and removed. Where the file system has no hard links, path
// is created exclusively and removed again if writing fails.
func writeNew(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mongomig-init-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	err = os.Link(tmp.Name(), path)
	if err == nil || errors.Is(err, os.ErrExist) {
		if err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	return writeExclusive(path, data)
}

func writeExclusive(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// dataWarning asks for a review of what the baseline took from the data.
func dataWarning(path string, d inspect.DataCounts) string {
	if d == (inspect.DataCounts{}) {
		return ""
	}
	parts := []string{count(d.Enums, "enum") + fmt.Sprintf(" (%s)", count(d.EnumValues, "value")), count(d.PropertyNames, "property name")}
	if d.Examples > 0 {
		parts = append(parts, count(d.Examples, "example document"))
	}
	return fmt.Sprintf("%s holds %s taken from the documents' data: review them for secrets and personal data before committing "+
		"(enums are only inferred for short labels, never under names like password, email or token; docs/adopting.md)",
		migration.DisplayName(path), strings.Join(parts, ", "))
}
