package reshape

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/internal/state"
	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/version"
)

// Planned is what a run-once operation would do, counted on the
// database as it is now.
type Planned struct {
	Index int               `json:"index"`
	Kind  migration.RunKind `json:"kind"`
	Line  int               `json:"line"`
	// Summary says what it will do and touch, in a line.
	Summary string `json:"summary"`
	// Documents: the documents it would rename, drop or copy; for
	// extract, the parents holding elements.
	Documents int64 `json:"documents"`
	// Elements (extract) is how many elements those parents hold.
	Elements int64 `json:"elements,omitempty"`
	// Refused says why up would refuse it ("" when it would run).
	Refused string `json:"refused,omitempty"`
	// Done: an earlier run finished it.
	Done bool `json:"done,omitempty"`
}

// Plan counts what m's run-once operations would touch. It reads only:
// counts, and for extract the arrays' lengths (one read of the parents
// that hold elements). Each operation is counted on the database as it is,
// not as the operations before it would leave it.
func Plan(ctx context.Context, db *mongo.Database, m *migration.Migration) ([]Planned, error) {
	return PlanWith(ctx, db, m, nil)
}

// PlanWith is [Plan] with the registry holding the Go functions of `go:`
// operations: one it lacks is refused.
func PlanWith(ctx context.Context, db *mongo.Database, m *migration.Migration, reg *version.Registry) ([]Planned, error) {
	st := state.New(db)
	var out []Planned
	for i, op := range m.Run {
		p := Planned{Index: i, Kind: op.Kind, Line: op.Pos.Line, Summary: describe(op)}
		prog, err := st.RunProgressOf(ctx, m.Version, i, string(op.Kind))
		if err != nil {
			return nil, err
		}
		if prog.Done {
			p.Done, p.Summary = true, p.Summary+": done by an earlier run"
			out = append(out, p)
			continue
		}
		if op.Kind == migration.RunGo {
			planGo(m.File, op, reg, &p)
			out = append(out, p)
			continue
		}
		if err := planOne(ctx, db, op, &p); err != nil {
			return nil, fmt.Errorf("%s:%d: run operation %d (%s): %w", m.File, op.Pos.Line, i+1, op.Kind, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func planOne(ctx context.Context, db *mongo.Database, op migration.RunOp, p *Planned) error {
	count := func(name string) (int64, error) { return db.Collection(name).CountDocuments(ctx, bson.D{}) }
	var err error
	switch op.Kind {
	case migration.RunRename:
		if p.Documents, err = count(op.From); err == nil {
			p.Summary += fmt.Sprintf(" (%d documents)", p.Documents)
			var n int64
			if n, err = count(op.To); err == nil && n > 0 {
				p.Refused = fmt.Sprintf("%s exists already with %d documents", op.To, n)
			}
		}
	case migration.RunDrop:
		if p.Documents, err = count(op.Name); err == nil {
			p.Summary += fmt.Sprintf(" (%d documents)", p.Documents)
			if p.Documents > 0 && !op.AllowNonEmpty {
				p.Refused = (&NotEmptyError{Collection: op.Name, Documents: p.Documents}).Error()
			} else if p.Documents > 0 {
				p.Summary += ": allowNonEmpty, they cannot come back"
			}
		}
	case migration.RunCopy:
		if p.Documents, err = count(op.From); err == nil {
			p.Summary += fmt.Sprintf(" (%d documents)", p.Documents)
		}
	case migration.RunExtract:
		err = planExtract(ctx, db, op.Extract, p)
	case migration.RunEmbed:
		err = planEmbed(ctx, db, op.Embed, p)
	}
	return err
}

func planExtract(ctx context.Context, db *mongo.Database, x *migration.Extract, p *Planned) error {
	cur, err := db.Collection(x.From).Find(ctx, withElements(x), options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: x.Array, Value: 1}}))
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		arr, ok := cur.Current.Lookup(splitPath(x.Array)...).ArrayOK()
		if !ok {
			continue
		}
		vals, err := arr.Values()
		if err != nil {
			return err
		}
		p.Documents++
		p.Elements += int64(len(vals))
	}
	if err := cur.Err(); err != nil {
		return err
	}
	p.Summary += fmt.Sprintf(": moves %d elements of %d %s documents", p.Elements, p.Documents, x.From)
	return nil
}
