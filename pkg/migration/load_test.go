package migration_test

import (
	"embed"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mongomig/mongomig/pkg/migration"
)

//go:embed testdata/embedded
var embedded embed.FS

func TestLoadEmbedFS(t *testing.T) {
	sub, err := fs.Sub(embedded, "testdata/embedded")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migration.Load(sub)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Version != 1 || ms[1].Version != 2 || ms[1].File != "0002_orders.json" {
		t.Fatalf("loaded %d migrations: %+v", len(ms), ms)
	}
}

func TestLoadOrdersNumericallyAndIgnoresOtherFiles(t *testing.T) {
	body := &fstest.MapFile{Data: []byte("collections: {}\n")}
	fsys := fstest.MapFS{
		"10_ten.yaml":        body,
		"0002_two.yml":       body,
		"9_nine.json":        &fstest.MapFile{Data: []byte(`{"collections": {}}`)},
		"README.md":          &fstest.MapFile{Data: []byte("# notes")},
		".0003_hidden.yaml":  body,
		"sub/0004_deep.yaml": body,
		"helpers/x.go":       &fstest.MapFile{Data: []byte("package x")},
	}
	ms, err := migration.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, m := range ms {
		got = append(got, m.Version)
	}
	if len(got) != 3 || got[0] != 2 || got[1] != 9 || got[2] != 10 {
		t.Fatalf("versions = %v, want [2 9 10]", got)
	}
}

// TestLoadReportsEveryProblem: a directory with several broken files gets
// all problems back at once, and the good files still parse.
func TestLoadReportsEveryProblem(t *testing.T) {
	fsys := fstest.MapFS{
		"0001_good.yaml":    {Data: []byte("collections:\n  users:\n    upgrade: [{unset: [a]}]\n")},
		"0002_bad.yaml":     {Data: []byte("collections:\n  users:\n    validationLevel: high\n")},
		"002_dup.yaml":      {Data: []byte("collections: {}\n")},
		"0003_worse.yaml":   {Data: []byte("colections: {}\n")},
		"final_cleanup.yml": {Data: []byte("collections: {}\n")},
	}
	ms, err := migration.Load(fsys)
	var list migration.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("want ErrorList, got %v", err)
	}
	text := err.Error()
	for _, want := range []string{
		`0002_bad.yaml:3:22: invalid validationLevel "high"`,
		`002_dup.yaml:1:1: version 2 is also used by`,
		`0003_worse.yaml:1:1: unknown key "colections"; did you mean "collections"?`,
		`0003_worse.yaml:1:1: missing key "collections"`,
		`final_cleanup.yml: invalid migration file name`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("errors\n%s\nlack %s", text, want)
		}
	}
	var good []string
	for _, m := range ms {
		if !m.Broken {
			good = append(good, m.Name)
		}
	}
	if len(ms) != 5 || len(good) != 1 || good[0] != "good" {
		t.Errorf("want every readable migration back, only 'good' not Broken; got %d, good %v", len(ms), good)
	}
	// Sorted by file.
	for i := 1; i < len(list); i++ {
		if list[i-1].File > list[i].File {
			t.Errorf("errors not sorted by file: %s before %s", list[i-1].File, list[i].File)
		}
	}
}

func TestLoadMissingDirectory(t *testing.T) {
	_, err := migration.Load(os.DirFS("does/not/exist"))
	if err == nil || !strings.Contains(err.Error(), "read migration directory") {
		t.Fatalf("err = %v", err)
	}
}

// TestSampleMigrations keeps the repository's own samples valid.
func TestSampleMigrations(t *testing.T) {
	ms, err := migration.Load(os.DirFS("../../migrations"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 4 {
		t.Fatalf("want at least 4 sample migrations, have %d", len(ms))
	}
	var validators, upgrades, indexes, levels int
	for _, m := range ms {
		for _, c := range m.Collections {
			if c.Validator != nil {
				validators++
			}
			if len(c.Upgrade) > 0 {
				upgrades++
			}
			if len(c.Indexes.Create)+len(c.Indexes.Drop) > 0 {
				indexes++
			}
			if c.ValidationLevel != "" || c.ValidationAction != "" {
				levels++
			}
		}
	}
	if validators == 0 || upgrades == 0 || indexes == 0 || levels == 0 {
		t.Errorf("samples must exercise validators (%d), upgrades (%d), indexes (%d), levels/actions (%d)", validators, upgrades, indexes, levels)
	}
}

func TestChecksumChangesWithContent(t *testing.T) {
	a := migration.Checksum([]byte("collections: {}\n"))
	b := migration.Checksum([]byte("collections: {} \n"))
	if a == b || a != migration.Checksum([]byte("collections: {}\n")) {
		t.Fatalf("checksum not a function of the exact bytes: %s %s", a, b)
	}
}
