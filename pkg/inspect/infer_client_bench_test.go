package inspect

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// BenchmarkInferClient: the client-side cost per document of init's and
// analyze's statistics against decoding the same raw document into a
// bson.D (what the plain cursor scan does), without the server.
func BenchmarkInferClient(b *testing.B) {
	docs := make([]bson.Raw, 1000)
	for i := range docs {
		docs[i], _ = bson.Marshal(generated(i))
	}
	for _, bench := range []struct {
		name    string
		analyze bool
	}{{"mongomig", false}, {"analyze", true}} {
		b.Run(bench.name, func(b *testing.B) {
			col := &collector{root: newObjStats(), enumCap: DefaultEnumMax, analyze: bench.analyze}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := col.add(docs[i%len(docs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			var d bson.D
			if err := bson.Unmarshal(docs[i%len(docs)], &d); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
