package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
)

const hostileOK = "collections:\n  users:\n    upgrade: [{unset: [a]}]\n"

// TestHostileFiles covers the files git cannot hold (the rest are in
// testdata/malformed): a FIFO, a device, files over the size limit, deep
// nesting, a plain list of a million values, names with control
// characters. Each is exit 2 for lint and up with a message naming the
// file and the limit, and nothing reaches the database.
func TestHostileFiles(t *testing.T) {
	deep := func(levels int) string {
		return "collections:\n  users:\n    validator: {$jsonSchema: " +
			strings.Repeat("{not: ", levels-5) + "{}" + strings.Repeat("}", levels-5) + "}\n"
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		flags []string
		env   map[string]string
		want  []string
	}{
		{"fifo", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "0002_fifo.yaml"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, nil, nil, []string{"0002_fifo.yaml: error: is a named pipe (FIFO), not a regular file"}},
		{"too-large", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "0002_big.yaml"), hostileOK+"description: "+strings.Repeat("x", 1<<20)+"\n")
		}, nil, nil, []string{"0002_big.yaml: error: file is 1048640 bytes, more than the limit of 1048576 bytes",
			"hint: split it into several migrations, or raise the limit (mongomig --max-file-size)"}},
		{"max-file-size-flag", nil, []string{"--max-file-size", "40"}, nil,
			[]string{"0001_ok.yaml: error: file is 50 bytes, more than the limit of 40 bytes"}},
		{"max-file-size-env", nil, nil, map[string]string{"MONGOMIG_MAX_FILE_SIZE": "1KiB"}, nil},
		{"deep-4990", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "0002_deep.yaml"), deep(4990))
		}, nil, nil, []string{"0002_deep.yaml:3:1206: error: nesting deeper than 200 levels of mappings and lists (aliases expanded), the limit"}},
		{"million-values", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "0002_list.yaml"), "collections: {}\ndescription: ["+strings.Repeat("1,", 1_000_000)+"1]\n")
		}, []string{"--max-file-size", "4MiB"}, nil, []string{"0002_list.yaml:1:1: error: file holds more than 1000000 values (mappings, lists and scalars), the limit"}},
		{"escape-sequence-name", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "0008_\x1b[31mred.yaml"), hostileOK)
		}, nil, nil, []string{`"0008_\x1b[31mred.yaml": error: invalid migration file name "0008_\x1b[31mred.yaml"`}},
		{"newline-name", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "0009_x.yaml: error: forged\n0010_y.yaml"), "collections: [\n")
		}, nil, nil, []string{`"0009_x.yaml: error: forged\n0010_y.yaml":1:1: error: syntax error`}},
	}
	sandboxDir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "0001_ok.yaml"), hostileOK)
			if c.setup != nil {
				c.setup(t, dir)
			}
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			if c.want == nil { // a raised limit: the directory is fine
				if r := run(t, false, append(append([]string{"--dir", dir}, c.flags...), "lint")...); r.code != ExitOK {
					t.Fatalf("lint exit %d\n%s%s", r.code, r.stdout, r.stderr)
				}
				return
			}
			r := run(t, false, append(append([]string{"--dir", dir}, c.flags...), "lint")...)
			if r.code != ExitUsage {
				t.Fatalf("lint exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("lint output lacks %q:\n%s", w, r.stdout)
				}
			}
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				if strings.ContainsAny(line, "\x1b\r") || strings.HasPrefix(line, "0010_y.yaml") {
					t.Errorf("raw control character or forged line in the output: %q", line)
				}
			}
			r = run(t, false, append(append([]string{"--dir", dir, "--embedded", sandboxDir}, c.flags...), "up")...)
			if r.code != ExitUsage {
				t.Errorf("up exit %d, want 2\n%s", r.code, r.stderr)
			}
			if strings.Contains(r.stderr, "\x1b") {
				t.Errorf("up printed a raw escape sequence: %q", r.stderr)
			}
		})
	}
	sandboxtest.InDir(t, sandboxDir, "app", func(db *mongo.Database) {
		names, err := db.ListCollectionNames(context.Background(), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		if len(names) != 0 {
			t.Errorf("invalid migrations wrote to the database: collections %v", names)
		}
	})
}

// TestHostileNamesInJSON: JSON output carries the name as it is (the
// encoder escapes it), so tools get the real file name.
func TestHostileNamesInJSON(t *testing.T) {
	dir := t.TempDir()
	name := "0008_\x1b[31mred.yaml"
	// discard: true: the unset's lint warning is not this test's problem.
	writeFile(t, filepath.Join(dir, name), strings.Replace(hostileOK, "{unset: [a]}", "{unset: [a], discard: true}", 1))
	r := run(t, false, "--dir", dir, "--json", "lint")
	if r.code != ExitUsage || strings.Contains(r.stdout, "\x1b") {
		t.Fatalf("exit %d, output %q", r.code, r.stdout)
	}
	var rep struct {
		Problems []struct{ File string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || rep.Problems[0].File != name {
		t.Errorf("problems %+v, want one for %q", rep.Problems, name)
	}
}

// TestFlagValuesRefused: flag values that cannot work or would check
// nothing are exit 2 naming the flag, before anything connects or scans.
func TestFlagValuesRefused(t *testing.T) {
	for _, v := range []string{"0", "-1", "lots", "1GB"} {
		r := run(t, false, "--dir", "../../migrations", "--max-file-size", v, "lint")
		if r.code != ExitUsage || !strings.Contains(r.stderr, "--max-file-size") {
			t.Errorf("--max-file-size %s: exit %d, stderr %q", v, r.code, r.stderr)
		}
	}
	sandboxDir := t.TempDir()
	for _, args := range [][]string{
		{"up", "--lock-lease", "0"},
		{"up", "--lock-lease", "500ms"},
		{"down", "--lock-wait", "-1s"},
		{"validate", "--sample", "0"},
	} {
		r := run(t, false, append([]string{"--embedded", sandboxDir, "--dir", "../../migrations"}, args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, args[1]) || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestUnreadableDirectory: a --dir this user may not list is exit 2
// naming the directory and what to do (root reads any directory: the test
// needs another user).
func TestUnreadableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can read any directory")
	}
	dir := filepath.Join(t.TempDir(), "locked")
	if err := os.Mkdir(dir, 0o300); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"lint"}, {"--allow-empty", "lint"}} {
		r := run(t, false, append([]string{"--dir", dir}, args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "migration directory "+dir+" cannot be read: permission denied; give this user read") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
