package migration_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mongomig/mongomig/pkg/migration"
)

// FuzzParse feeds arbitrary bytes to the parser: it must never panic, and
// must return either a migration or an ErrorList whose every entry names
// the file.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../migrations/*.yaml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("collections:\n  users:\n    upgrade: [{set: {a: {$date: x}}}]\n"))
	f.Add([]byte(`{"collections": {"c": {"indexes": {"create": [{"keys": {"a": 1}}]}}}}`))
	f.Add([]byte("a: &x [*x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := migration.Parse("0001_fuzz.yaml", data)
		if err == nil {
			if m == nil || m.Version != 1 {
				t.Fatalf("no error but migration %+v", m)
			}
			return
		}
		if m == nil || !m.Broken {
			t.Fatalf("error without a Broken partial migration: %+v", m)
		}
		var list migration.ErrorList
		if !errors.As(err, &list) || len(list) == 0 {
			t.Fatalf("error is not a non-empty ErrorList: %T %v", err, err)
		}
		for _, e := range list {
			if e.File != "0001_fuzz.yaml" || e.Msg == "" {
				t.Fatalf("error without file or message: %+v", e)
			}
		}
	})
}
