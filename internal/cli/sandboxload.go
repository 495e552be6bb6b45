package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/migration"
)

// loadBatch is how many documents one insertMany of `sandbox load` sends
// (FerretDB v1 answers large batches slowly).
const loadBatch = 500

// maxLoadLine bounds one line of a file to load: a 16 MiB BSON document
// written as Extended JSON, with room to spare.
const maxLoadLine = 64 << 20

func sandboxLoadCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "load",
		Usage:     "insert documents from Extended JSON lines files (as mongoexport writes them) into --uri or --embedded DIR",
		ArgsUsage: "FILE...",
		Description: "Each line of FILE is one document in Extended JSON, relaxed or canonical (mongoexport's default\n" +
			"output; blank lines are skipped). Every file is read first: a line that is not a document is\n" +
			"refused with its file:line and nothing is inserted. The collection is --collection, else the\n" +
			"file's name without its extension (users.jsonl: users). Works against any server.\n" +
			"Exit codes: 0 loaded, 1 the server refused a document (a duplicate _id: its file:line is named;\n" +
			"--drop replaces the collection), 2 usage or a line that is not a document.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "collection", Usage: "load every FILE into collection `C` (default: each file's name without its extension)"},
			&cli.BoolFlag{Name: "drop", Usage: "drop each collection before loading it"},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Len() == 0 {
				return usageError(errors.New("sandbox load needs the files to load: mongomig sandbox load --uri URI FILE.jsonl (one Extended JSON document a line, as mongoexport writes them)"))
			}
			return e.runLoad(c.Context, loadOptions{files: c.Args().Slice(), collection: c.String("collection"), drop: c.Bool("drop")})
		},
	}
}

// loadOptions are `sandbox load`'s parsed flags and arguments.
type loadOptions struct {
	files      []string
	collection string
	drop       bool
}

// loadResult is one file's line of `sandbox load --json`.
type loadResult struct {
	File       string `json:"file"`
	Collection string `json:"collection"`
	Inserted   int64  `json:"inserted"`
}

func (e *env) runLoad(ctx context.Context, o loadOptions) error {
	// Every file is read before anything is written: a bad line is
	// refused with nothing inserted.
	var colls []string
	for _, f := range o.files {
		coll := o.collection
		if coll == "" {
			coll = collectionOf(f)
		}
		if coll == "" {
			return usageError(fmt.Errorf("%s: no collection name in the file's name: pass --collection C", migration.DisplayName(f)))
		}
		if _, err := readLines(f, func(int, bson.D) error { return nil }); err != nil {
			return err
		}
		colls = append(colls, coll)
	}
	db, closeDB, err := e.connect(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	var results []loadResult
	dropped := map[string]bool{}
	for i, f := range o.files {
		coll := db.Collection(colls[i])
		if o.drop && !dropped[colls[i]] {
			if err := coll.Drop(ctx); err != nil {
				return fmt.Errorf("drop %s: %w", colls[i], err)
			}
			dropped[colls[i]] = true
		}
		n, err := loadFile(ctx, coll, f)
		if err != nil {
			return err
		}
		results = append(results, loadResult{File: f, Collection: colls[i], Inserted: n})
		if !e.out.json {
			e.out.printf("loaded %s from %s into %s.%s\n", count(n, "document"), migration.DisplayName(f), display(db.Name()), display(colls[i]))
		}
	}
	if e.out.json {
		return e.out.writeJSON(results)
	}
	return nil
}

// collectionOf is the collection a file loads into by default: its base
// name without its extensions (users.jsonl, users.json.txt: users).
func collectionOf(file string) string {
	base := filepath.Base(file)
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	return base
}

// loadFile inserts the documents of file into coll in batches and returns
// how many were inserted. A document the server refuses is named by its
// file:line.
func loadFile(ctx context.Context, coll *mongo.Collection, file string) (int64, error) {
	var inserted int64
	var batch []any
	var lines []int
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := coll.InsertMany(ctx, batch)
		if res != nil {
			inserted += int64(len(res.InsertedIDs))
		}
		if err != nil {
			return loadRefused(err, file, lines, inserted, coll.Name())
		}
		batch, lines = batch[:0], lines[:0]
		return nil
	}
	_, err := readLines(file, func(line int, doc bson.D) error {
		batch, lines = append(batch, doc), append(lines, line)
		if len(batch) < loadBatch {
			return nil
		}
		return flush()
	})
	if err != nil {
		return inserted, err
	}
	return inserted, flush()
}

// loadRefused names the line of the first document of a batch the server
// refused.
func loadRefused(err error, file string, lines []int, inserted int64, coll string) error {
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) && len(bwe.WriteErrors) > 0 {
		we := bwe.WriteErrors[0]
		hint := "fix the document, or load into an empty collection"
		if mongo.IsDuplicateKeyError(we) {
			hint = "its _id is already in the collection: --drop replaces the collection, or remove the line"
		}
		line := 0
		if we.Index >= 0 && we.Index < len(lines) {
			line = lines[we.Index]
		}
		return fmt.Errorf("%s:%d: the server refused the document (collection %s): %s; %s (%s of the file inserted before it)",
			migration.DisplayName(file), line, display(coll), we.Message, hint, count(inserted, "document"))
	}
	return fmt.Errorf("load %s into %s: %w (%s of the file inserted before it)", migration.DisplayName(file), display(coll), err, count(inserted, "document"))
}

// readLines calls fn with each document of file, one Extended JSON
// document a line, and returns how many it read. A line that is not a
// document is a usage error naming file:line.
func readLines(file string, fn func(line int, doc bson.D) error) (int, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, usageError(fmt.Errorf("%s: %w", migration.DisplayName(file), unwrapPathErr(err)))
	}
	defer f.Close()
	r := bufio.NewReader(f)
	n := 0
	for line := 1; ; line++ {
		text, err := readLine(r)
		if errors.Is(err, io.EOF) && len(text) == 0 {
			return n, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return n, usageError(fmt.Errorf("%s:%d: %w", migration.DisplayName(file), line, err))
		}
		if line == 1 {
			text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf")) // a byte order mark
		}
		text = bytes.TrimSpace(text)
		if len(text) == 0 {
			continue
		}
		doc, perr := parseLine(text)
		if perr != nil {
			return n, usageError(fmt.Errorf("%s:%d: %s", migration.DisplayName(file), line, perr))
		}
		n++
		if err := fn(line, doc); err != nil {
			return n, err
		}
	}
}

// readLine reads one line, refusing one longer than maxLoadLine.
func readLine(r *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := r.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > maxLoadLine {
			return nil, fmt.Errorf("line longer than %d MiB: not one document of a mongoexport file", maxLoadLine>>20)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return out, err
		}
	}
}

// parseLine reads one line as an Extended JSON document.
func parseLine(text []byte) (bson.D, error) {
	switch text[0] {
	case '[':
		return nil, errors.New("a JSON array, not one document a line: export with mongoexport without --jsonArray, or write each document on a line of its own")
	case '{':
	default:
		return nil, fmt.Errorf("not a document (a line starts with '{'): %s", display(excerpt(string(text), 40)))
	}
	var doc bson.D
	if err := bson.UnmarshalExtJSON(text, false, &doc); err != nil {
		return nil, fmt.Errorf("not a document in Extended JSON: %v; fix the line or remove it", err)
	}
	return doc, nil
}

// excerpt is s cut to n runes, with "..." when it was longer.
func excerpt(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}
