package backfill

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/version"
)

// backfillFailure words a document's failure for the backfill's result.
// key groups the documents failing the same way: it names neither their
// _id nor their values (as validate's groups, see upgradeMessage). msg is
// the group's message: the first document's, quoting at most an excerpt of
// its value; the group lists the _ids.
func backfillFailure(err error) (rule, key, msg string) {
	var ie *version.InvalidError
	if errors.As(err, &ie) {
		msg = "the upgraded document fails the validator: " + invalidSummary(ie)
		return "validator", msg, msg
	}
	key = bsonx.UpgradeMessageWith(err, func(string) string { return "…" })
	msg = bsonx.UpgradeMessageWith(err, func(found string) string { return "e.g. " + bsonx.Excerpt(found, bsonx.MaxValueExcerpt) })
	return "upgrade", key, msg
}

// invalidSummary names the rules an upgraded document breaks, without the
// values found (so documents failing the same way group together).
func invalidSummary(ie *version.InvalidError) string {
	var parts []string
	for _, f := range ie.Failures {
		p := f.Path
		if p == "" {
			p = "(document)"
		}
		parts = append(parts, fmt.Sprintf("%s: %s (%s)", p, f.Message, f.Rule))
	}
	return fmt.Sprintf("%s of migration %d; fix the documents or the upgrade, then run backfill again", strings.Join(parts, "; "), ie.From)
}

// refusal is a statement of a bulk write that the server refused for its
// own document (see refusesDocument).
type refusal struct {
	index int // into the bulk write's models
	err   error
}

var (
	// MongoDB's duplicate key message (buildDupKeyErrorStatus in
	// src/mongo/db/storage/index_entry_comparison.cpp): "E11000 duplicate
	// key error collection: <ns> index: <name> dup key: { <field>: <value> }".
	mongoDupIndex = regexp.MustCompile(`index: (\S+) dup key: (.*)$`)
)

// refuse records the documents of refused (statements of the models whose
// _ids are ids) as failures of collection coll.
func refuse(failed map[string]*FailureGroup, coll string, ids bson.A, refused []refusal) {
	for _, rf := range refused {
		rule, key, msg := writeFailure(coll, rf.err)
		g := failed[key]
		if g == nil {
			g = &FailureGroup{Rule: rule, Message: msg}
			failed[key] = g
		}
		raw, _ := bson.Marshal(bson.D{{Key: "_id", Value: ids[rf.index]}})
		g.Add(bsonx.IDOf(raw))
	}
}

// without returns ids but those of refused.
func without(ids bson.A, refused []refusal) bson.A {
	if len(refused) == 0 {
		return ids
	}
	skip := make(map[int]bool, len(refused))
	for _, rf := range refused {
		skip[rf.index] = true
	}
	out := make(bson.A, 0, len(ids)-len(refused))
	for i, id := range ids {
		if !skip[i] {
			out = append(out, id)
		}
	}
	return out
}

// writeFailure words a document whose write the server refused, as
// backfillFailure does an upgrade's failure: key names neither the _id nor
// a value; msg quotes at most an excerpt of a value.
func writeFailure(coll string, err error) (rule, key, msg string) {
	const next = "; it is not written: fix the documents (or the upgrade, or the index), then run backfill again"
	code, text := probe.ServerCode(err), err.Error()
	var we mongo.WriteError
	if errors.As(err, &we) {
		text = we.Message
	}
	switch code {
	case probe.CodeDuplicateKey:
		index, value := "a unique index", ""
		if m := mongoDupIndex.FindStringSubmatch(text); m != nil {
			index, value = "unique index "+m[1], " (e.g. "+dupKeyExcerpt(m[2])+")"
		} else if m := probe.DocumentDBUniqueIndex.FindStringSubmatch(text); m != nil {
			index = "unique index " + m[1]
		} else if m := probe.FerretUniqueIndex.FindStringSubmatch(text); m != nil {
			index = "unique index " + ferretIndexName(coll, m[1])
		}
		key = "the upgraded document has the same key as another document in " + index
		return "duplicate key", key + next, key + value + next
	case probe.CodeDocumentValidationFailure:
		msg = "the server's validator refuses the upgraded document (DocumentValidationFailure)" + next
		return "server validator", msg, msg
	}
	key = fmt.Sprintf("the server refuses the write of the upgraded document (code %d)", code)
	return "write refused", key + next, key + ": " + bsonx.Excerpt(text, 80) + next
}

// dupKeyExcerpt quotes MongoDB's "{ <field>: <value> }" with at most an
// excerpt of the value.
func dupKeyExcerpt(key string) string {
	inner := strings.TrimSuffix(strings.TrimPrefix(key, "{ "), " }")
	if field, value, ok := strings.Cut(inner, ": "); ok {
		return field + ": " + bsonx.Excerpt(value, bsonx.MaxValueExcerpt)
	}
	return bsonx.Excerpt(inner, bsonx.MaxValueExcerpt)
}

// ferretIndexName is the index name in FerretDB's SQLite index name
// "<table>_<index>" of collection coll.
func ferretIndexName(coll, sqlite string) string {
	re := regexp.MustCompile(`^_?` + regexp.QuoteMeta(strings.ToLower(coll)) + `_[0-9a-f]{8}_(.+)$`)
	if m := re.FindStringSubmatch(sqlite); m != nil {
		return m[1]
	}
	return sqlite
}
