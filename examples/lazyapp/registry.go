package lazyapp

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/version"
)

//go:embed migrations/*.yaml
var migrationFiles embed.FS

// Migrations returns the embedded migration files, with the file names at
// the root as pkg/version and pkg/runner expect them.
func Migrations() (fs.FS, error) {
	return fs.Sub(migrationFiles, "migrations")
}

// RegistryOptions registers the Go functions that `func:` steps name. The
// deploy job passes the same options to the runner.
func RegistryOptions() []version.Option {
	return []version.Option{
		version.WithFunc("splitName", SplitName),
	}
}

// NewRegistry builds the registry. Call it once at start-up and share the
// result: it is immutable and safe for concurrent use. It fails, naming
// file:line, when a file is invalid or names a func that is not registered.
func NewRegistry() (*version.Registry, error) {
	files, err := Migrations()
	if err != nil {
		return nil, err
	}
	return version.New(files, RegistryOptions()...)
}

// SplitName is the `func: splitName` step of 0002_split_name.yaml. It gets a
// users document of version 1, {name: "Ada Lovelace", ...}, and returns one
// of version 2, {name: {first: "Ada", last: "Lovelace"}, ...}. doc is a
// private copy it may modify; it must not touch _id or the version field.
func SplitName(doc bson.D) (bson.D, error) {
	for i, e := range doc {
		if e.Key != "name" {
			continue
		}
		switch name := e.Value.(type) {
		case bson.D:
			return doc, nil // already split
		case string:
			first, last, _ := strings.Cut(strings.TrimSpace(name), " ")
			doc[i].Value = bson.D{{Key: "first", Value: first}, {Key: "last", Value: last}}
			return doc, nil
		default:
			return nil, fmt.Errorf("name is a %T, not a string", name)
		}
	}
	return doc, nil
}
