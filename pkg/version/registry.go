package version

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"

	"github.com/mongomig/mongomig/pkg/migration"
)

// DefaultField is the document field that holds a document's version.
const DefaultField = "version"

// Option configures [New].
type Option interface{ apply(*config) error }

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

type config struct {
	field        string
	funcs        map[string]Func
	funcReads    map[string][]string // WithFunc's Fields, by func name
	runFuncs     map[string]RunFunc  // WithRunFunc
	allowMissing bool
	extra        []string // WithCollections
	allowUnknown bool
}

// WithField names the version field (default "version").
func WithField(name string) Option {
	return optionFunc(func(c *config) error {
		if name == "" || name == "_id" || containsDot(name) || name[0] == '$' {
			return fmt.Errorf("invalid version field %q: use a top-level field name such as %q", name, DefaultField)
		}
		c.field = name
		return nil
	})
}

// WithFunc registers a Go function for `func: name` steps.
func WithFunc(name string, fn Func, opts ...FuncOption) Option {
	return optionFunc(func(c *config) error {
		if fn == nil {
			return fmt.Errorf("func %q is nil", name)
		}
		if _, dup := c.funcs[name]; dup {
			return fmt.Errorf("func %q is registered twice", name)
		}
		var spec funcSpec
		for _, o := range opts {
			if err := o.applyFunc(&spec); err != nil {
				return fmt.Errorf("func %q: %w", name, err)
			}
		}
		c.funcs[name] = fn
		if spec.declared {
			if c.funcReads == nil {
				c.funcReads = map[string][]string{}
			}
			c.funcReads[name] = spec.reads
		}
		return nil
	})
}

// WithFuncs registers several functions at once.
func WithFuncs(funcs map[string]Func) Option {
	return optionFunc(func(c *config) error {
		names := make([]string, 0, len(funcs))
		for name := range funcs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if err := WithFunc(name, funcs[name]).apply(c); err != nil {
				return err
			}
		}
		return nil
	})
}

// AllowMissingFuncs lets [New] succeed when a file names a function that
// was not registered; upgrading through such a step then fails with
// [ErrFuncNotRegistered]. The stock mongomig binary uses it: it knows no
// application's functions, yet can still lint and report.
func AllowMissingFuncs(allow bool) Option {
	return optionFunc(func(c *config) error {
		c.allowMissing = allow
		return nil
	})
}

func containsDot(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return true
		}
	}
	return false
}

// ErrFuncNotRegistered is returned when an upgrade needs a func step whose
// function the binary does not register.
var ErrFuncNotRegistered = errors.New("upgrade function not registered")

// ErrInvalidFile is wrapped by [New] (and the validator compiling) for a
// migration whose file has errors: linting the directory lists them.
var ErrInvalidFile = errors.New("the file has errors")

// Registry holds every collection's upgrade chain. It is immutable after
// [New] and safe for concurrent use. Build it with [New] or
// [FromMigrations]: a nil *Registry is not usable.
type Registry struct {
	field      string
	fieldPath  []string // field as a path, for set
	chains     map[string]*chain
	migrations []*migration.Migration
	validators map[string]compiledValidator
	// known holds the collections the migrations name and WithCollections
	// declares; see ErrUnknownCollection.
	known        map[string]bool
	allowUnknown bool
	runFuncs     map[string]RunFunc // WithRunFunc
}

// chain is one collection's upgrades in version order.
type chain struct {
	links []link
	// keys holds the top-level names the upgrades' declarative steps name
	// and the version field (nil: too many to index); see topIndex.
	keys        *keyTable
	versionSlot int
}

// index numbers the top-level names the chain's upgrade steps name, and
// the version field, into keys.
func (c *chain) index(versionField string) {
	var names []string
	add := func(n string) int {
		for s, x := range names {
			if x == n {
				return s
			}
		}
		names = append(names, n)
		return len(names) - 1
	}
	for li := range c.links {
		l := &c.links[li]
		l.readsAll = l.missing != ""
		for si := range l.steps {
			l.readsAll = l.readsAll || l.steps[si].readsAny()
			for _, name := range l.steps[si].reads {
				add(name)
				l.reads = appendNew(l.reads, name)
			}
			for fi := range l.steps[si].fields {
				f := &l.steps[si].fields[fi]
				f.slot = add(f.segs[0])
				l.reads = appendNew(l.reads, f.segs[0])
				if f.toSg != nil {
					f.toSlot = add(f.toSg[0])
					l.reads = appendNew(l.reads, f.toSg[0])
				}
			}
		}
	}
	c.versionSlot = add(versionField)
	c.keys = newKeyTable(names)
}

type link struct {
	version int64
	file    string
	steps   []step
	down    []step // the downgrade, if declared
	hasDown bool
	// adds bounds how many top-level fields the upgrade can add, so the
	// working copy is allocated once at the right size.
	adds int
	// missing and missingDown name an unregistered func of the upgrade or
	// the downgrade, with AllowMissingFuncs.
	missing, missingDown string
	// reads are the top-level fields the declarative steps name (sources
	// and targets), readsAll that a func step may read any field: what a
	// write-back guards beyond the fields it writes (see DeltaFor).
	reads    []string
	readsAll bool
	// downReads and downReadsAll are the same for the downgrade (see
	// DowngradeDeltaFor).
	downReads    []string
	downReadsAll bool
}

func (c *chain) current() int64 {
	if c == nil || len(c.links) == 0 {
		return 0
	}
	return c.links[len(c.links)-1].version
}

// New loads the migrations in fsys (see migration.Load) and builds the
// registry. It fails when a file is invalid or names a func that was not
// registered (unless [AllowMissingFuncs]).
func New(fsys fs.FS, opts ...Option) (*Registry, error) {
	ms, err := migration.Load(fsys)
	if err != nil {
		return nil, err
	}
	return FromMigrations(ms, opts...)
}

// FromMigrations builds a registry from migrations already loaded, in
// version order.
func FromMigrations(ms []*migration.Migration, opts ...Option) (*Registry, error) {
	cfg := config{field: DefaultField, funcs: map[string]Func{}}
	for _, o := range opts {
		if err := o.apply(&cfg); err != nil {
			return nil, err
		}
	}
	if list := reservedFieldErrors(ms, cfg.field); len(list) > 0 {
		return nil, list
	}
	r := &Registry{field: cfg.field, fieldPath: []string{cfg.field}, chains: map[string]*chain{}, migrations: ms, runFuncs: cfg.runFuncs}
	r.setKnown(cfg)
	var missing []error
	for _, m := range ms {
		if m.Broken {
			return nil, fmt.Errorf("migration %s is invalid: %w", m.File, ErrInvalidFile)
		}
		for _, c := range m.Collections {
			if len(c.Upgrade) == 0 {
				continue
			}
			l := link{version: m.Version, file: m.File, hasDown: len(c.Downgrade) > 0}
			var errs []error
			l.steps, l.missing, errs = compileSteps(c.Upgrade, cfg, m.File, c.Name)
			missing = append(missing, errs...)
			l.down, l.missingDown, errs = compileSteps(c.Downgrade, cfg, m.File, c.Name)
			for i := range l.down {
				l.down[i].overwrites = true
			}
			missing = append(missing, errs...)
			l.adds = topLevelAdds(l.steps)
			l.downReads, l.downReadsAll = downgradeReads(l.down, l.missingDown)
			ch := r.chains[c.Name]
			if ch == nil {
				ch = &chain{}
				r.chains[c.Name] = ch
			}
			ch.links = append(ch.links, l)
		}
	}
	if len(missing) > 0 {
		return nil, errors.Join(missing...)
	}
	for _, ch := range r.chains {
		ch.index(r.field)
	}
	var err error
	if r.validators, err = compileValidators(ms); err != nil {
		return nil, err
	}
	return r, nil
}

// compileSteps compiles one upgrade or downgrade. A func that is not
// registered is an error, or with AllowMissingFuncs the name returned as
// missing.
func compileSteps(steps []migration.Step, cfg config, file, coll string) (out []step, missing string, errs []error) {
	for _, s := range steps {
		cs, err := compileStep(s, cfg.funcs, cfg.funcReads)
		if err != nil {
			if !cfg.allowMissing {
				errs = append(errs, fmt.Errorf("%s:%d:%d: %s: %w; register it with version.WithFunc(%q, fn)", file, s.Pos.Line, s.Pos.Column, coll, err, s.Func))
				continue
			}
			missing = s.Func
		}
		out = append(out, cs)
	}
	return out, missing, errs
}

// topLevelAdds counts the distinct top-level fields steps may create; a
// func may add any number, so it counts for a few.
func topLevelAdds(steps []step) int {
	names := map[string]bool{}
	funcs := 0
	for _, s := range steps {
		if s.op == migration.OpFunc {
			funcs++
		}
		for _, f := range s.fields {
			switch s.op {
			case migration.OpSet, migration.OpDefault:
				names[f.segs[0]] = true
			case migration.OpRename, migration.OpCopy:
				names[f.toSg[0]] = true
			}
		}
	}
	return len(names) + 4*funcs
}

// Field is the version field's name.
func (r *Registry) Field() string { return r.field }

// Current is the version documents of coll are upgraded to: the number of
// the last migration that declares an upgrade for it (0 if none does).
func (r *Registry) Current(coll string) int64 { return r.chains[coll].current() }

// Collections lists the collections that have upgrades, sorted.
func (r *Registry) Collections() []string {
	out := make([]string, 0, len(r.chains))
	for name := range r.chains {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Previous returns the document version of coll before version v: the
// previous migration declaring an upgrade for it, or 0.
func (r *Registry) Previous(coll string, v int64) int64 {
	prev := int64(0)
	if ch := r.chains[coll]; ch != nil {
		for _, l := range ch.links {
			if l.version >= v {
				break
			}
			prev = l.version
		}
	}
	return prev
}

// HasDowngrade reports whether migration v declares a downgrade for coll.
func (r *Registry) HasDowngrade(coll string, v int64) bool {
	if l := r.chains[coll].find(v); l != nil {
		return l.hasDown
	}
	return false
}

func (c *chain) find(v int64) *link {
	if c == nil {
		return nil
	}
	for i := range c.links {
		if c.links[i].version == v {
			return &c.links[i]
		}
	}
	return nil
}

// Versions lists the document versions that exist for coll, oldest first,
// starting with 0 (before mongomig).
func (r *Registry) Versions(coll string) []int64 {
	out := []int64{0}
	if ch := r.chains[coll]; ch != nil {
		for _, l := range ch.links {
			out = append(out, l.version)
		}
	}
	return out
}

// MissingFunc is a func step whose Go function the registry lacks (built
// with [AllowMissingFuncs]).
type MissingFunc struct {
	Version int64  // the migration declaring the upgrade
	File    string // its file
	Func    string // the function's name
}

// MissingFuncs lists the upgrade steps of coll that name a Go function the
// registry does not have: documents below those versions cannot be
// upgraded by this program.
func (r *Registry) MissingFuncs(coll string) []MissingFunc {
	var out []MissingFunc
	if ch := r.chains[coll]; ch != nil {
		for _, l := range ch.links {
			if l.missing != "" {
				out = append(out, MissingFunc{Version: l.version, File: l.file, Func: l.missing})
			}
		}
	}
	return out
}

// appendNew appends s to list unless it holds it already.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
