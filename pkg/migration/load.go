package migration

import (
	"fmt"
	"io/fs"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Extensions are the file extensions a migration file may have.
var Extensions = []string{".yaml", ".yml", ".json"}

var fileNameRE = regexp.MustCompile(`^([0-9]+)_([a-z0-9][a-z0-9_]*)\.(yaml|yml|json)$`)

// IsMigrationFile reports whether a directory entry's name has a migration
// file extension (whether or not the rest of the name is valid).
func IsMigrationFile(name string) bool {
	return slices.Contains(Extensions, strings.ToLower(path.Ext(name))) && !strings.HasPrefix(name, ".")
}

// fileName checks the base name and returns its version and name.
func (p *parser) fileName() (int64, string) {
	base := path.Base(p.file)
	m := fileNameRE.FindStringSubmatch(base)
	if m == nil {
		p.add(Pos{}, fileNameHint(base), "invalid migration file name %q", base)
		return 0, ""
	}
	v, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || v > math.MaxInt64/2 {
		p.add(Pos{}, HintSmallerVersion, "version %s in file name is too large", m[1])
		return 0, m[2]
	}
	if v == 0 {
		p.add(Pos{}, "number migrations from 1 (document version 0 means \"before mongomig\")", "version 0 is reserved")
		return 0, m[2]
	}
	return v, m[2]
}

func fileNameHint(base string) string {
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	num, rest, found := strings.Cut(stem, "_")
	if _, err := strconv.ParseUint(num, 10, 64); err != nil || !found {
		return "name it NNNN_snake_name" + ext + ", starting with the version number, such as 0001_create_users" + ext
	}
	return fmt.Sprintf("write the name after the number in lower-case snake_case, such as %s_%s%s", num, snakeCase(rest), strings.ToLower(ext))
}

func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r + 'a' - 'A')
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return strings.Trim(b.String(), "_")
}

// Load reads every migration file at the root of fsys (subdirectories and
// files with other extensions are ignored) and returns the migrations in
// version order. It reads regular files only, and symbolic links only when
// they resolve to one inside fsys (when fsys implements [fs.ReadLinkFS], as
// os.DirFS does), of at most [DefaultMaxFileSize] bytes or what
// [WithLimits] set. On any problem it returns an [ErrorList] naming all of
// them together with every migration it could read, the broken ones
// partially filled and marked Broken, so lint can keep checking them.
// Nothing from a failed Load may be applied.
func Load(fsys fs.FS) ([]*Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read migration directory: %w", err)
	}
	var (
		out    []*Migration
		errs   ErrorList
		byVers = map[int64]string{}
	)
	max := limitsOf(fsys).maxFileSize()
	for _, e := range entries {
		if !IsMigrationFile(e.Name()) { // a directory named like one is an error (readMigration)
			continue
		}
		data, rerr := readMigration(fsys, e, max)
		if rerr != nil {
			errs = append(errs, rerr)
			continue
		}
		m, err := Parse(e.Name(), data)
		if err != nil {
			errs = append(errs, err.(ErrorList)...)
		}
		if m.Version > 0 {
			if prev, dup := byVers[m.Version]; dup {
				errs = append(errs, duplicate(e.Name(), prev, m.Version))
				m.Broken = true
			} else {
				byVers[m.Version] = e.Name()
			}
		}
		out = append(out, m)
	}
	slices.SortStableFunc(out, func(a, b *Migration) int { return cmpInt(a.Version, b.Version) })
	if err := errs.err(); err != nil {
		return out, err
	}
	return out, nil
}

// duplicate is the error of a second file claiming version v. The version
// is the file's name, not a line of it, but the error is placed at 1:1 so
// that it reads file:line:column like every other problem of a migration
// (editors and CI annotations jump to the file).
func duplicate(file, prev string, v int64) *Error {
	return &Error{File: file, Pos: Pos{Line: 1, Column: 1}, Msg: fmt.Sprintf("version %d is also used by %s", v, prev),
		Hint: "give one of them the next free number (leading zeros do not make versions different)"}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
