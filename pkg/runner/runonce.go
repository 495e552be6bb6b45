package runner

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
	"github.com/mongomig/mongomig/pkg/reshape"
)

// runOnce runs m's run-once operations (pkg/reshape) under the lock ctx
// carries, after m's commands and before its ledger entry, and updates
// exists for the migrations after m.
func (r *Runner) runOnce(ctx context.Context, m *migration.Migration, exists map[string]bool) ([]reshape.OpResult, error) {
	if len(m.Run) == 0 {
		return nil, nil
	}
	res, err := reshape.Run(ctx, r.db, m, reshape.Options{Log: r.cfg.log, Hook: r.hook})
	if err != nil {
		return res, err
	}
	for _, op := range m.Run {
		switch op.Kind {
		case migration.RunRename:
			delete(exists, op.From)
			exists[op.To] = true
		case migration.RunDrop:
			delete(exists, op.Name)
		default:
			exists[op.Collections()[1]] = true
		}
	}
	return res, nil
}

// runChecksum is what schemaChecksum covers of m's run-once operations
// (nil when it has none, so the checksum of a migration without them is
// what it always was).
func runChecksum(m *migration.Migration) bson.A {
	if len(m.Run) == 0 {
		return nil
	}
	var ops bson.A
	for _, op := range m.Run {
		d := bson.D{{Key: "kind", Value: string(op.Kind)}, {Key: "from", Value: op.From}, {Key: "to", Value: op.To},
			{Key: "name", Value: op.Name}, {Key: "allowNonEmpty", Value: op.AllowNonEmpty}}
		if x := op.Extract; x != nil {
			d = append(d, bson.E{Key: "extract", Value: bson.D{{Key: "from", Value: x.From}, {Key: "array", Value: x.Array},
				{Key: "to", Value: x.To}, {Key: "ref", Value: x.Ref}, {Key: "keep", Value: string(x.Keep)},
				{Key: "countField", Value: x.CountField}, {Key: "first", Value: x.First}}})
		}
		ops = append(ops, d)
	}
	return ops
}
