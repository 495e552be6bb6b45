package inspect

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/migration"
)

// FuzzInferFile: init on generated documents never panics, and a
// baseline it returns always parses (it never writes a file its own
// parser refuses). The input is a BSON document; the collection gets it
// three times, once with its first field removed and once as a
// sub-document, so that fields are present, missing and nested.
func FuzzInferFile(f *testing.F) {
	for _, d := range []bson.D{
		{{Key: "_id", Value: 1}, {Key: "name", Value: "Ada"}, {Key: "price", Value: 12.5}},
		{{Key: "_id", Value: "x"}, {Key: "sessions", Value: bson.D{{Key: "0f3a9c", Value: 1}, {Key: "a@b.c", Value: 2}}}},
		{{Key: "_id", Value: bson.NewObjectID()}, {Key: "password", Value: "sk_live_123"}, {Key: "tags", Value: bson.A{"a", 1, nil}}},
		{{Key: "$oid", Value: "bad"}, {Key: "a\x1b[31m", Value: bson.D{{Key: "b", Value: bson.D{{Key: "c", Value: bson.A{bson.D{{Key: "d", Value: true}}}}}}}}},
	} {
		raw, err := bson.Marshal(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		raw := bson.Raw(data)
		if raw.Validate() != nil || len(data) > 1<<16 {
			return
		}
		var d bson.D
		if bson.Unmarshal(raw, &d) != nil {
			return
		}
		docs := []bson.D{d, d, {{Key: "nested", Value: d}}}
		if len(d) > 0 {
			docs = append(docs, d[1:])
		}
		inf := inferDocs(t, InferOptions{Examples: 1}, map[string][]bson.D{"c": docs})
		file, err := inf.File("0001_baseline.yaml", FileOptions{})
		if err != nil {
			return // refused with an error: never a file
		}
		if _, err := migration.Parse("0001_baseline.yaml", file); err != nil {
			t.Fatalf("init wrote a baseline its parser refuses: %v\n%s", err, file)
		}
	})
}
