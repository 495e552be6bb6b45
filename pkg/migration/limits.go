package migration

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultMaxFileSize is the largest migration file [Load] reads unless
// [WithLimits] says otherwise: 1 MiB, a hundred times the largest real
// migration seen.
const DefaultMaxFileSize = 1 << 20

// MaxDepth is how deeply a migration file may nest mappings and lists.
//
// MongoDB refuses any BSON object nested deeper than 200 levels, commands
// included (BSONDepth::kDefaultMaxAllowableDepth in
// src/mongo/bson/bson_depth.h; each object or array is a level). A
// validator travels two levels down its collMod command ({collMod: c,
// validator: {$jsonSchema: S}}), and a schema sits four levels down a file
// (top, collections, the collection, validator), so a file nested deeper
// than 200 levels holds a schema MongoDB would refuse. Checking depth
// before anything recurses also bounds the schema compiler's cost.
const MaxDepth = 200

// maxValues bounds the number of values (mappings, lists, scalars) in a
// file, with aliases expanded ("billion laughs"); real migrations are a
// few thousand.
const maxValues = 1_000_000

// Limits bound what [Load] reads. The zero value means the defaults.
type Limits struct {
	// MaxFileSize is the largest migration file read, in bytes; zero
	// means DefaultMaxFileSize. Larger files are errors, and a file that
	// grows while it is read is never read past it.
	MaxFileSize int64
}

func (l Limits) maxFileSize() int64 {
	if l.MaxFileSize <= 0 {
		return DefaultMaxFileSize
	}
	return l.MaxFileSize
}

// WithLimits returns fsys with limits that [Load] applies to it (and so
// every caller of Load: lint.Lint, runner.New, version.New).
func WithLimits(fsys fs.FS, l Limits) fs.FS {
	return limitedFS{fsys: fsys, limits: l}
}

// limitedFS carries Limits through APIs that take an fs.FS; it forwards
// the interfaces Load uses.
type limitedFS struct {
	fsys   fs.FS
	limits Limits
}

func (l limitedFS) Open(name string) (fs.File, error)          { return l.fsys.Open(name) }
func (l limitedFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(l.fsys, name) }
func (l limitedFS) Stat(name string) (fs.FileInfo, error)      { return fs.Stat(l.fsys, name) }
func (l limitedFS) Lstat(name string) (fs.FileInfo, error)     { return fs.Lstat(l.fsys, name) }
func (l limitedFS) ReadLink(name string) (string, error)       { return fs.ReadLink(l.fsys, name) }

func limitsOf(fsys fs.FS) Limits {
	if l, ok := fsys.(limitedFS); ok {
		return l.limits
	}
	return Limits{}
}

// readMigration reads one directory entry as a migration file: a regular
// file, or a symbolic link that resolves to one inside the directory, of
// at most max bytes. Anything else (a link leaving the directory, a FIFO,
// a device, a socket, a directory, a file too large) is an *Error that
// names the file and never shows its content.
func readMigration(fsys fs.FS, e fs.DirEntry, max int64) ([]byte, *Error) {
	name := e.Name()
	fail := func(hint, format string, args ...any) *Error {
		return &Error{File: name, Msg: fmt.Sprintf(format, args...), Hint: hint}
	}
	target := name
	if e.Type()&fs.ModeSymlink != 0 {
		resolved, outside, err := resolveLink(fsys, name)
		switch {
		case outside != "":
			return nil, fail("replace the link with a copy of the file: mongomig reads only files inside the migration directory",
				"is a symbolic link to %s, outside the migration directory", DisplayName(outside))
		case err != nil:
			return nil, fail("replace the link with the file itself", "symbolic link cannot be followed: %s", describeErr(err))
		}
		target = resolved
	}
	info, err := fs.Lstat(fsys, target)
	if err != nil {
		return nil, fail("check the file's permissions", "cannot read: %s", describeErr(err))
	}
	if !info.Mode().IsRegular() {
		return nil, fail("a migration must be a regular file: remove it, or rename it without a migration extension",
			"is %s, not a regular file", fileKind(info.Mode()))
	}
	tooLarge := func(size string) *Error {
		return fail(HintFileSize,
			"file is %s, more than the limit of %d bytes", size, max)
	}
	if info.Size() > max {
		return nil, tooLarge(strconv.FormatInt(info.Size(), 10) + " bytes")
	}
	f, err := fsys.Open(target)
	if err != nil {
		return nil, fail("check the file's permissions", "cannot read: %s", describeErr(err))
	}
	defer f.Close()
	// The file may have been replaced or may grow since it was checked:
	// never read more than max (+1 to tell "exactly max" from "more").
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fail("check the file's permissions", "cannot read: %s", describeErr(err))
	}
	if int64(len(data)) > max {
		return nil, tooLarge("larger than it was when listed (it grew while being read)")
	}
	return data, nil
}

// maxLinkHops bounds a chain of symbolic links (Linux's own limit is 40).
const maxLinkHops = 40

// resolveLink follows the symbolic link name, and any link on the way,
// inside fsys. It returns the path the link leads to within fsys, or, in
// outside, the link target that leaves fsys (an absolute path, or one
// climbing above the directory).
func resolveLink(fsys fs.FS, name string) (resolved, outside string, err error) {
	var done []string
	todo := strings.Split(name, "/")
	first := ""
	for hops := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", first, nil
			}
			done = done[:len(done)-1]
			continue
		}
		cur := path.Join(append(done, c)...)
		info, err := fs.Lstat(fsys, cur)
		if err != nil {
			return "", "", err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", "", errors.New("too many levels of symbolic links")
		}
		t, err := fs.ReadLink(fsys, cur)
		if err != nil {
			return "", "", err
		}
		if first == "" {
			first = t
		}
		if path.IsAbs(t) || strings.HasPrefix(t, `\`) || (len(t) > 1 && t[1] == ':') {
			return "", first, nil
		}
		todo = append(strings.Split(t, "/"), todo...)
	}
	return path.Join(done...), "", nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file (mode " + m.String() + ")"
}

// describeErr is an error without the path a *fs.PathError repeats (the
// message names the file already, quoted when it must be).
func describeErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// DisplayName returns a file name as it may be printed on a terminal or in
// a log: unchanged when it is printable, otherwise Go-quoted ("0008_\x1b[31m.yaml"),
// so that no escape sequence reaches the terminal and no newline forges
// an extra "file:line: error" line.
func DisplayName(name string) string {
	if !utf8.ValidString(name) || strings.HasPrefix(name, `"`) {
		return strconv.Quote(name)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) && r != ' ' {
			return strconv.Quote(name)
		}
	}
	return name
}

// maxExcerpt is how much of a value from a file a message may quote.
const maxExcerpt = 80

// excerpt cuts s to its first line and at most maxExcerpt characters, so
// an error never echoes more than a glimpse of a file (which may be a
// secret reached through a link, or megabytes of one value).
func excerpt(s string) string {
	cut := false
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s, cut = s[:i], true
	}
	if utf8.RuneCountInString(s) > maxExcerpt {
		r := []rune(s)
		s, cut = string(r[:maxExcerpt]), true
	}
	if cut {
		s += "..."
	}
	return s
}
