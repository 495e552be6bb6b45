package downgrade

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// Pending is one collection's documents a revert takes from version From
// to To.
type Pending struct {
	Coll     string
	From, To int64
	Count    int64 // documents at From or above when checked
}

// Check is what a revert of m downgrades of the documents of the
// collections exists holds, checked without writing anything: every
// document at m's version or above passes through m's downgrade on its
// way down, so such documents refuse the revert when m has no downgrade
// ([*DowngradeError]) or its func is not registered
// ([*version.FuncMissingError]); a document partway through a
// server-side backfill refuses it too ([*PartwayError]).
func Check(ctx context.Context, db *mongo.Database, reg *version.Registry, m *migration.Migration, exists map[string]bool) ([]Pending, error) {
	var out []Pending
	for _, c := range m.Collections {
		if len(c.Upgrade) == 0 || !exists[c.Name] {
			continue
		}
		// A document partway through a server-side upgrade is at no
		// version a downgrade knows: finish it first. Only the marker's
		// shape counts (version.Marked): a field of that name holding
		// anything else is the application's, or nothing a backfill
		// would ever clear.
		partway, err := db.Collection(c.Name).CountDocuments(ctx, version.Marked())
		if err != nil {
			return nil, fmt.Errorf("count %s documents partway through a backfill: %w", c.Name, err)
		}
		if partway > 0 {
			return nil, &PartwayError{File: m.File, Collection: c.Name, Field: version.MarkerField, Count: partway}
		}
		n, err := db.Collection(c.Name).CountDocuments(ctx, reg.VersionAtLeast(m.Version))
		if err != nil {
			return nil, fmt.Errorf("count %s documents at version %d or above: %w", c.Name, m.Version, err)
		}
		if n > 0 && !reg.HasDowngrade(c.Name, m.Version) {
			return nil, &DowngradeError{File: m.File, Collection: c.Name, Version: m.Version, Count: n}
		}
		if fn := reg.MissingDowngradeFunc(c.Name, m.Version); n > 0 && fn != "" {
			return nil, &version.FuncMissingError{Collection: c.Name, File: m.File + "'s downgrade", Func: fn, Version: m.Version, Downgrade: true, Documents: n}
		}
		if n > 0 {
			out = append(out, Pending{Coll: c.Name, From: m.Version, To: reg.Previous(c.Name, m.Version), Count: n})
		}
	}
	return out, nil
}

// ErrPartway is a revert refused because documents are partway through an
// interrupted server-side backfill.
var ErrPartway = errors.New("documents partway through a backfill")

// PartwayError is a revert of File refused (nothing changed) because
// Count documents of Collection are partway through an interrupted
// server-side backfill: their Field holds a backfill's marker, and a
// backfill of Collection finishes them. It wraps [ErrPartway].
type PartwayError struct {
	File, Collection, Field string
	Count                   int64
}

func (e *PartwayError) Error() string {
	return e.Message("a backfill of " + e.Collection + " finishes them")
}

// Message is the error's message with next (what finishes the documents)
// before ", then down".
func (e *PartwayError) Message(next string) string {
	return fmt.Sprintf("%v: cannot revert %s: %d %s documents are partway through an interrupted server-side backfill (their %s holds a backfill's marker); %s, then down (nothing was changed)",
		ErrPartway, e.File, e.Count, e.Collection, e.Field, next)
}

func (e *PartwayError) Unwrap() error { return ErrPartway }

// Progress counts the documents of one collection a revert of M has
// downgraded and logs them after every batch (its Add is a Walk's
// Progress).
type Progress struct {
	Log   events.Logger
	M     *migration.Migration
	P     Pending
	done  int64
	start time.Time
}

// NewProgress starts counting p's documents.
func NewProgress(log events.Logger, m *migration.Migration, p Pending) *Progress {
	return &Progress{Log: log, M: m, P: p, start: time.Now()}
}

// Add counts n more documents downgraded.
func (p *Progress) Add(n int64) {
	p.done += n
	total := max(p.P.Count, p.done)
	rate := float64(p.done) / max(time.Since(p.start).Seconds(), 0.001)
	p.Log.Log(events.DowngradeProgress{Version: p.M.Version, File: p.M.File, Collection: p.P.Coll, From: p.P.From, To: p.P.To, Count: p.done, Total: total, Rate: rate})
}
