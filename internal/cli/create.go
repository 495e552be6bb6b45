package cli

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/mongomig/mongomig/pkg/migration"
)

func createCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "create",
		Usage:     "write the next numbered migration file from a commented template",
		ArgsUsage: "NAME",
		Action: func(c *cli.Context) error {
			opts, err := parseCreateArgs(c)
			if err != nil {
				return err
			}
			return e.runCreate(opts)
		},
	}
}

// createOptions are create's parsed argument.
type createOptions struct {
	name string // the migration's name as typed (made snake_case)
}

func parseCreateArgs(c *cli.Context) (createOptions, error) {
	if c.Args().Len() != 1 {
		return createOptions{}, usageError(errors.New("create takes one argument, the migration's name: mongomig create add_user_status"))
	}
	return createOptions{name: c.Args().First()}, nil
}

func (e *env) runCreate(o createOptions) error {
	return createFile(e.out, e.g.Dir, o.name)
}

// createResult is create's --json output.
type createResult struct {
	File    string `json:"file"`
	Version int64  `json:"version"`
	Name    string `json:"name"`
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_]*$`)

// createFile writes the next numbered migration file named rawName in dir.
func createFile(o *output, dir, rawName string) error {
	name := toSnake(rawName)
	if !nameRE.MatchString(name) {
		return usageError(fmt.Errorf("invalid migration name %q: use letters, digits and underscores, such as add_user_status", rawName))
	}
	if err := fileNameFits(fmt.Sprintf("0001_%s.yaml", name), name); err != nil {
		return err // too long whatever the version: before creating the directory
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create migration directory: %w", err)
	}
	next, width, err := nextVersion(dir)
	if err != nil {
		return err
	}
	file := fmt.Sprintf("%0*d_%s.yaml", width, next, name)
	if err := fileNameFits(file, name); err != nil {
		return err
	}
	path := filepath.Join(dir, file)
	content := template(file, next, name)
	// O_EXCL: never overwrite, even if another create raced us.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	warnSameNamed(o, dir, file, name)
	if o.json {
		return o.writeJSON(createResult{File: path, Version: next, Name: name})
	}
	o.printf("%s %s\n", o.green("created"), path)
	return nil
}

// nextVersion returns one more than the highest version among the file
// names in dir (whether or not the files parse), and the digit width to
// keep names aligned: at least 4, or the widest existing number.
func nextVersion(dir string) (int64, int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, fmt.Errorf("read %s: %w", dir, err)
	}
	var max int64
	width := 4
	for _, e := range entries {
		if e.IsDir() || !migration.IsMigrationFile(e.Name()) {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil {
			continue
		}
		max = maxInt64(max, v)
		width = max2(width, len(num))
	}
	if max == math.MaxInt64 {
		return 0, 0, usageError(fmt.Errorf("%s holds version %d, the largest there is: no next number fits; renumber that file (lint refuses it anyway)", dir, max))
	}
	return max + 1, width, nil
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func max2(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// toSnake turns "Add User Status", "add-user-status" or "AddHTTPAPIKey"
// into add_user_status and add_http_api_key: a word starts at a capital
// that follows a lower-case letter or a digit, or that ends a run of
// capitals before a lower-case letter (HTTPServer: http_server).
func toSnake(s string) string {
	var b strings.Builder
	rs := []rune(strings.TrimSpace(s))
	prevUnderscore := true
	for i, r := range rs {
		switch {
		case unicode.IsUpper(r) && r < utf8.RuneSelf:
			if i > 0 && !prevUnderscore && wordStart(rs, i) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			prevUnderscore = false
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			prevUnderscore = false
		case r == ' ' || r == '-' || r == '_':
			if !prevUnderscore {
				b.WriteByte('_')
			}
			prevUnderscore = true
		default:
			b.WriteRune(r) // kept, so the name check rejects it with the original visible
			prevUnderscore = false
		}
	}
	return strings.TrimSuffix(b.String(), "_")
}

// wordStart: the capital rs[i] begins a word (see toSnake).
func wordStart(rs []rune, i int) bool {
	prev := rs[i-1]
	if unicode.IsLower(prev) || unicode.IsDigit(prev) {
		return true
	}
	return unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
}

func template(file string, version int64, name string) string {
	return fmt.Sprintf(`# %s: migration %d (%s).
# Format reference: docs/file-format.md. Check it with: mongomig lint
description: TODO say what this migration changes and why.

# One entry per collection this migration changes. Replace {} with, e.g.:
#
#   users:
#     validator:                  # the schema documents of this version satisfy
#       $jsonSchema:
#         bsonType: object
#         required: [name]
#         properties:
#           name: {bsonType: string}
#     validationLevel: moderate   # off | moderate | strict
#     validationAction: error     # error | warn
#     upgrade:                    # previous version -> this version, in order
#       - rename: {email: contact.email}
#       - default: {status: active}
#       - {unset: [legacyId], discard: true}  # discard: its values may go
#     indexes:
#       create:
#         # sparse: documents the upgrade has not reached yet lack the field, and
#         # MongoDB would index them all as null (a unique build then fails)
#         - {keys: {contact.email: 1}, unique: true, sparse: true}
#       drop: [email_1]
#     examples:                   # lint checks upgrade(before) == after
#       - before: {name: Ada, email: ada@example.com}
#         after: {name: Ada, contact: {email: ada@example.com}, status: active}
collections: {}
`, file, version, name)
}
