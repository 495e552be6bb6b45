package migration

// OpExtract names the keeper of a [Discard] whose data a run-once extract
// moved into its own collection.
const OpExtract Op = "extract"

// keptByRun reports whether a run-once extract of m moves the data at path
// of coll: an extract of coll's array path, or of an array containing
// path. Up runs it before the migration is recorded, so before a lazy read
// or a backfill upgrades any document, and down embeds the elements back:
// the array's data is kept, not discarded. (Elements an old release
// appends after the extract finished are still embedded when an upgrade's
// unset meets them; lint's error on that pairing says so.)
func keptByRun(m *Migration, coll, path string) (Keeper, bool) {
	for _, op := range m.Run {
		x := op.Extract
		if op.Kind != RunExtract || x.From != coll {
			continue
		}
		if x.Array == path || isPrefix(x.Array, path) {
			return Keeper{Op: OpExtract, Path: x.Array, To: x.To, Pos: op.Pos}, true
		}
	}
	return Keeper{}, false
}
