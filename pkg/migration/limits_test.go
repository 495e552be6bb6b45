package migration_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mongomig/mongomig/pkg/migration"
)

const valid = "collections:\n  users:\n    upgrade: [{unset: [a]}]\n"

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// loadErrors loads dir and returns its errors by file.
func loadErrors(t *testing.T, fsys fs.FS) ([]*migration.Migration, map[string]string) {
	t.Helper()
	ms, err := migration.Load(fsys)
	got := map[string]string{}
	var list migration.ErrorList
	if err != nil && !errors.As(err, &list) {
		t.Fatalf("Load: %v", err)
	}
	for _, e := range list {
		got[e.File] += e.Error() + "\n"
	}
	return ms, got
}

// TestLoadRefusesLinksLeavingTheDirectory: a link to a file outside the
// migration directory (absolute, relative, through another link) is an
// error naming the link and its target, and the target's content is never
// read into a message; links that stay inside work.
func TestLoadRefusesLinksLeavingTheDirectory(t *testing.T) {
	root := t.TempDir()
	secret := filepath.Join(root, "credentials")
	write(t, secret, "https://ada:ghp_SECRETTOKEN1234@github.com\n")
	dir := filepath.Join(root, "migrations")
	write(t, filepath.Join(dir, "shared", "users.yaml"), valid)
	symlink(t, secret, filepath.Join(dir, "0001_abs.yaml"))
	symlink(t, "../credentials", filepath.Join(dir, "0002_rel.yaml"))
	symlink(t, "../credentials", filepath.Join(dir, "hop"))
	symlink(t, "hop", filepath.Join(dir, "0003_chain.yaml"))
	symlink(t, "shared/../../credentials", filepath.Join(dir, "0004_climb.yaml"))
	symlink(t, "/dev/zero", filepath.Join(dir, "0005_zero.yaml"))
	symlink(t, "shared/users.yaml", filepath.Join(dir, "0006_inside.yaml"))
	symlink(t, "0007_loop.yaml", filepath.Join(dir, "0007_loop.yaml"))

	ms, got := loadErrors(t, os.DirFS(dir))
	want := map[string]string{
		"0001_abs.yaml":   "is a symbolic link to " + secret + ", outside the migration directory",
		"0002_rel.yaml":   "is a symbolic link to ../credentials, outside",
		"0003_chain.yaml": "is a symbolic link to hop, outside",
		"0004_climb.yaml": "is a symbolic link to shared/../../credentials, outside",
		"0005_zero.yaml":  "is a symbolic link to /dev/zero, outside",
		"0007_loop.yaml":  "too many levels of symbolic links",
	}
	for file, msg := range want {
		if !strings.Contains(got[file], msg) {
			t.Errorf("%s: errors %q lack %q", file, got[file], msg)
		}
	}
	for file, msg := range got {
		if strings.Contains(msg, "SECRETTOKEN") {
			t.Errorf("%s: error shows the target's content: %s", file, msg)
		}
		if want[file] == "" {
			t.Errorf("unexpected error: %s", msg)
		}
	}
	if len(ms) != 1 || ms[0].Version != 6 || ms[0].Broken {
		t.Errorf("the link inside the directory must load; got %+v", ms)
	}
}

// TestLoadReadsRegularFilesOnly: a FIFO (which would block the read
// forever) and a device are refused without being opened; so is a
// directory named like a migration (it was skipped silently,
// while docs/file-format.md calls it an error).
func TestLoadReadsRegularFilesOnly(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "0001_ok.yaml"), valid)
	if err := syscall.Mkfifo(filepath.Join(dir, "0002_fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "0004_dir.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, "0004_dir.yaml", filepath.Join(dir, "0005_dirlink.yaml"))
	want := map[string]string{
		"0002_fifo.yaml":    "0002_fifo.yaml: is a named pipe (FIFO), not a regular file",
		"0004_dir.yaml":     "0004_dir.yaml: is a directory, not a regular file",
		"0005_dirlink.yaml": "0005_dirlink.yaml: is a directory, not a regular file",
	}
	if os.Geteuid() == 0 { // only root may create device nodes
		if err := syscall.Mknod(filepath.Join(dir, "0003_zero.yaml"), syscall.S_IFCHR|0o644, 1<<8|5); err != nil {
			t.Fatal(err)
		}
		want["0003_zero.yaml"] = "0003_zero.yaml: is a character device, not a regular file"
	}
	ms, got := loadErrors(t, os.DirFS(dir))
	for file, msg := range want {
		if !strings.Contains(got[file], msg) {
			t.Errorf("%s: errors %q lack %q", file, got[file], msg)
		}
	}
	if len(got) != len(want) || len(ms) != 1 {
		t.Errorf("errors %v, %d migrations loaded; want %d errors and 0001 loaded", got, len(ms), len(want))
	}
}

// TestLoadCapsFileSize: a file over the limit (the default, or the one
// WithLimits sets) is refused naming the limit and the size, and a file
// that grows while read is never read past it.
func TestLoadCapsFileSize(t *testing.T) {
	dir := t.TempDir()
	pad := "description: " + strings.Repeat("x", migration.DefaultMaxFileSize) + "\n"
	write(t, filepath.Join(dir, "0001_big.yaml"), valid+pad)
	write(t, filepath.Join(dir, "0002_small.yaml"), valid)
	_, got := loadErrors(t, os.DirFS(dir))
	size := len(valid + pad)
	if want := "0001_big.yaml: file is " + strconv.Itoa(size) + " bytes, more than the limit of 1048576 bytes"; !strings.Contains(got["0001_big.yaml"], want) {
		t.Errorf("errors %q lack %q", got["0001_big.yaml"], want)
	}
	if len(got) != 1 {
		t.Errorf("errors: %v", got)
	}

	_, got = loadErrors(t, migration.WithLimits(os.DirFS(dir), migration.Limits{MaxFileSize: int64(size)}))
	if len(got) != 0 {
		t.Errorf("with the limit raised to the file's size: %v", got)
	}
	_, got = loadErrors(t, migration.WithLimits(os.DirFS(dir), migration.Limits{MaxFileSize: 20}))
	if !strings.Contains(got["0002_small.yaml"], "more than the limit of 20 bytes") {
		t.Errorf("with a 20-byte limit: %v", got)
	}

	_, got = loadErrors(t, growingFS{})
	if !strings.Contains(got["0001_grows.yaml"], "grew while being read") {
		t.Errorf("a file growing without end: %v", got)
	}
}

// growingFS holds one file that says it is 10 bytes long and never ends
// (as a log being appended to, or a file swapped for /dev/zero after the
// check).
type growingFS struct{}

func (growingFS) Open(name string) (fs.File, error) {
	if name == "." {
		return nil, fs.ErrInvalid
	}
	return endless{}, nil
}

func (growingFS) ReadDir(string) ([]fs.DirEntry, error) {
	return []fs.DirEntry{fs.FileInfoToDirEntry(smallInfo{})}, nil
}

func (growingFS) Stat(string) (fs.FileInfo, error) { return smallInfo{}, nil }

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}
func (endless) Close() error               { return nil }
func (endless) Stat() (fs.FileInfo, error) { return smallInfo{}, nil }

type smallInfo struct{}

func (smallInfo) Name() string       { return "0001_grows.yaml" }
func (smallInfo) Size() int64        { return 10 }
func (smallInfo) Mode() fs.FileMode  { return 0o644 }
func (smallInfo) ModTime() time.Time { return time.Time{} }
func (smallInfo) IsDir() bool        { return false }
func (smallInfo) Sys() any           { return nil }

var _ io.Reader = endless{}

// TestParseRefusesDeepNesting: a file nested deeper than MongoDB's BSON
// depth limit is refused at the first level past it, before the schema
// compiler sees it; aliases count at their expanded depth.
func TestParseRefusesDeepNesting(t *testing.T) {
	nested := func(levels int) string { // the file's own 4 levels + a schema
		schema := strings.Repeat("{not: ", levels-5) + "{}" + strings.Repeat("}", levels-5)
		return "collections:\n  users:\n    validator: {$jsonSchema: " + schema + "}\n"
	}
	if _, err := migration.Parse("0001_x.yaml", []byte(nested(migration.MaxDepth))); err != nil {
		t.Errorf("%d levels: %v", migration.MaxDepth, err)
	}
	_, err := migration.Parse("0001_x.yaml", []byte(nested(migration.MaxDepth+1)))
	want := "0001_x.yaml:3:1206: nesting deeper than 200 levels of mappings and lists (aliases expanded), the limit"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("%d levels: got %v, want %s", migration.MaxDepth+1, err, want)
	}
	_, err = migration.Parse("0001_x.yaml", []byte(nested(5000)))
	if err == nil || !strings.Contains(err.Error(), "nesting deeper than 200 levels") {
		t.Errorf("5000 levels: %v", err)
	}
	// 150 levels anchored, then aliased 100 levels down: 250 once expanded.
	deep := strings.Repeat("[", 150) + "1" + strings.Repeat("]", 150)
	aliased := "description: &d " + deep + "\ncollections: {c: {upgrade: [{set: {a: " +
		strings.Repeat("[", 100) + "*d" + strings.Repeat("]", 100) + "}}]}}\n"
	if _, err := migration.Parse("0001_x.yaml", []byte(aliased)); err == nil || !strings.Contains(err.Error(), "nesting deeper than 200 levels") {
		t.Errorf("depth through an alias: %v", err)
	}
}

// TestParseNamesTheSizeLimit: a large plain list is refused as too many
// values, not blamed on aliases (it has none); alias expansion still is.
func TestParseNamesTheSizeLimit(t *testing.T) {
	plain := "collections: {}\ndescription: [" + strings.Repeat("1,", 1_000_000) + "1]\n"
	_, err := migration.Parse("0001_x.yaml", []byte(plain))
	if err == nil || !strings.Contains(err.Error(), "0001_x.yaml:1:1: file holds more than 1000000 values (mappings, lists and scalars), the limit") ||
		strings.Contains(err.Error(), "alias") {
		t.Errorf("plain list: %v", err)
	}
	laughs := "a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
		"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
	if _, err := migration.Parse("0001_x.yaml", []byte(laughs)); err == nil || !strings.Contains(err.Error(), "aliases expand the document past 1000000 values") {
		t.Errorf("alias bomb: %v", err)
	}
}

// TestErrorsShowOnlyAnExcerpt: a value quoted in an error is cut to one
// line of at most 80 characters.
func TestErrorsShowOnlyAnExcerpt(t *testing.T) {
	long := strings.Repeat("s", 300)
	for _, data := range []string{
		"https://ada:" + long + "@github.com\n",
		"collections:\n  users:\n    " + long + ": 1\n",
		"collections:\n  users:\n    validationLevel: \"" + long + "\\nsecond line\"\n",
	} {
		_, err := migration.Parse("0001_x.yaml", []byte(data))
		if err == nil {
			t.Fatalf("%.40s: no error", data)
		}
		msg := err.Error()
		if strings.Contains(msg, strings.Repeat("s", 81)) || strings.Contains(msg, "second line") || !strings.Contains(msg, `s..."`) {
			t.Errorf("error echoes more than an 80-character excerpt: %s", msg)
		}
	}
}

// TestDisplayNameQuotesControlCharacters: a file name with an escape
// sequence or a newline is quoted wherever an error shows it.
func TestDisplayNameQuotesControlCharacters(t *testing.T) {
	for name, want := range map[string]string{
		"0001_ok.yaml":                      "0001_ok.yaml",
		"0008_\x1b[31mred.yaml":             `"0008_\x1b[31mred.yaml"`,
		"0009_x.yaml:1:1: error: forged\nx": `"0009_x.yaml:1:1: error: forged\nx"`,
		"0010_\xff.yaml":                    `"0010_\xff.yaml"`,
		"0011_é.yaml":                       "0011_é.yaml",
	} {
		if got := migration.DisplayName(name); got != want {
			t.Errorf("DisplayName(%q) = %s, want %s", name, got, want)
		}
		e := &migration.Error{File: name, Pos: migration.Pos{Line: 1, Column: 1}, Msg: "m"}
		if !strings.HasPrefix(e.Error(), want+":1:1: m") {
			t.Errorf("Error() = %q", e.Error())
		}
	}
}
