package migration_test

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

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
	// Depth, size and excerpt cases (issue #17).
	f.Add([]byte("collections: {c: {validator: {$jsonSchema: " + strings.Repeat("{not: ", 200) + "{}" + strings.Repeat("}", 200) + "}}}\n"))
	f.Add([]byte("a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"))
	f.Add([]byte("https://user:" + strings.Repeat("t", 200) + "@example.com\n"))
	f.Add([]byte("collections: {c: {validator: {$jsonSchema: {pattern: \"" + strings.Repeat("a", 33000) + "\"}}}}\n"))
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
			if strings.ContainsAny(e.Msg, "\n\r") {
				t.Fatalf("message spans lines: %q", e.Msg)
			}
		}
	})
}

// FuzzLoad feeds Load a directory entry of any name, type and content: a
// regular file, a symbolic link to any target (inside, outside, a loop),
// a FIFO, a device, a directory. Load must never panic; a FIFO, a device
// or a directory named like a migration is an error naming it (it used
// to be skipped); a target outside the directory is never read; and no error line
// carries a raw control character or a line break of its own.
func FuzzLoad(f *testing.F) {
	f.Add("0001_a.yaml", uint8(0), "", []byte("collections: {}\n"))
	f.Add("0001_a.yaml", uint8(1), "../secret", []byte{})
	f.Add("0001_a.yaml", uint8(1), "shared/ok.yaml", []byte{})
	f.Add("0001_a.yaml", uint8(1), "0001_a.yaml", []byte{})
	f.Add("0001_a.yaml", uint8(1), "/dev/zero", []byte{})
	f.Add("0001_a.yaml", uint8(2), "", []byte{})
	f.Add("0008_\x1b[31mred.yaml", uint8(0), "", []byte("collections: {}\n"))
	f.Add("0009_x.yaml:1:1: error: forged\n.yaml", uint8(0), "", []byte("a: [\n"))
	f.Add("0001_deep.yaml", uint8(0), "", []byte(strings.Repeat("[", 300)+strings.Repeat("]", 300)))
	f.Add("0001_dir.yaml", uint8(4), "", []byte{})
	f.Add("0001_utf16.yaml", uint8(0), "", []byte{0xff, 0xfe, 'a', 0, ':', 0, ' ', 0, '1', 0, '\n', 0})
	f.Add("0001_nul.yaml", uint8(0), "", []byte("collections:\n  users: {upgrade: [{unset: [a\x00b]}]}\n"))
	f.Add("0001_tag.yaml", uint8(0), "", []byte("collections: !!set\n  users: {upgrade: [{<<: {unset: [a]}}]}\n"))
	f.Fuzz(func(t *testing.T, name string, kind uint8, target string, data []byte) {
		if !fs.ValidPath(name) || strings.Contains(name, "/") || name == "." || !migration.IsMigrationFile(name) || name == "shared" {
			return
		}
		entry := &fstest.MapFile{Data: data}
		switch kind % 5 {
		case 1:
			entry = &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink}
		case 2:
			entry.Mode = fs.ModeNamedPipe
		case 3:
			entry.Mode = fs.ModeDevice | fs.ModeCharDevice
		case 4:
			entry = &fstest.MapFile{Mode: fs.ModeDir}
		}
		fsys := fstest.MapFS{name: entry, "shared/ok.yaml": {Data: []byte("collections: {}\n")}}
		_, err := migration.Load(migration.WithLimits(fsys, migration.Limits{MaxFileSize: 4096}))
		var list migration.ErrorList
		if err != nil && !errors.As(err, &list) {
			t.Fatalf("not an ErrorList: %v", err)
		}
		if kind%5 >= 2 && len(list) == 0 {
			t.Fatalf("a %v entry loaded without error", entry.Mode)
		}
		if kind%5 == 1 && (strings.HasPrefix(target, "/") || strings.HasPrefix(path.Clean(target), "..")) && len(list) == 0 {
			t.Fatalf("a link to %q (outside) loaded without error", target)
		}
		for _, e := range list {
			if e.File == "" || e.Msg == "" {
				t.Fatalf("error without file or message: %+v", e)
			}
		}
		if err != nil {
			if lines := strings.Split(err.Error(), "\n"); len(lines) != len(list) {
				t.Fatalf("%d errors printed as %d lines: %q", len(list), len(lines), err.Error())
			}
			if strings.ContainsFunc(err.Error(), func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f }) {
				t.Fatalf("raw control character in %q", err.Error())
			}
		}
	})
}
