package versioned_test

import (
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/version/versioned"
)

// notCovered are the *mongo.Collection methods the wrapper leaves out,
// each with why (docs/lazy-upgrades.md lists them too). Empty: the
// wrapper has every method.
var notCovered = map[string]string{}

// TestWrapperCoversTheDriversCollection: every method of
// *mongo.Collection exists on *versioned.Collection with the same
// parameters, or is listed in notCovered with a reason; the results may
// be the wrapper's own (SingleResult, Cursor, Collection). The wrapper
// used to lack UpdateMany, DeleteOne, DeleteMany, CountDocuments,
// Aggregate and BulkWrite, among others, though its documentation called
// it a drop-in.
func TestWrapperCoversTheDriversCollection(t *testing.T) {
	driver := reflect.TypeOf(&mongo.Collection{})
	wrapper := reflect.TypeOf(&versioned.Collection{})
	wrapped := map[reflect.Type]reflect.Type{
		reflect.TypeOf(&mongo.SingleResult{}): reflect.TypeOf(&versioned.SingleResult{}),
		reflect.TypeOf(&mongo.Collection{}):   reflect.TypeOf(&versioned.Collection{}),
	}
	for i := range driver.NumMethod() {
		m := driver.Method(i)
		if why, ok := notCovered[m.Name]; ok {
			t.Logf("%s: not covered: %s", m.Name, why)
			continue
		}
		w, ok := wrapper.MethodByName(m.Name)
		if !ok {
			t.Errorf("versioned.Collection has no %s (add it, or list it in notCovered and in docs/lazy-upgrades.md)", m.Name)
			continue
		}
		if w.Type.NumIn() != m.Type.NumIn() || w.Type.IsVariadic() != m.Type.IsVariadic() || w.Type.NumOut() != m.Type.NumOut() {
			t.Errorf("%s: %s, the driver's %s", m.Name, w.Type, m.Type)
			continue
		}
		for j := 1; j < m.Type.NumIn(); j++ {
			if w.Type.In(j) != m.Type.In(j) {
				t.Errorf("%s: parameter %d is %s, the driver's %s", m.Name, j, w.Type.In(j), m.Type.In(j))
			}
		}
		for j := range m.Type.NumOut() {
			if got, want := w.Type.Out(j), m.Type.Out(j); got != want && wrapped[want] != got && !(m.Name == "Find" && got == reflect.TypeOf(&versioned.Cursor{})) {
				t.Errorf("%s: result %d is %s, the driver's %s", m.Name, j, got, want)
			}
		}
	}
}
