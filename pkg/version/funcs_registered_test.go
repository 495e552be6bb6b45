package version_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongomig/mongomig/pkg/version"
)

func TestRegistered(t *testing.T) {
	fn := func(d bson.D) (bson.D, error) { return d, nil }
	opts := []version.Option{version.WithField("v"), version.WithFunc("a", fn), version.WithFuncs(map[string]version.Func{"b": fn})}
	for name, want := range map[string]bool{"a": true, "b": true, "c": false} {
		if got := version.Registered(name, opts...); got != want {
			t.Errorf("Registered(%q) = %v, want %v", name, got, want)
		}
	}
	if version.Registered("a") {
		t.Error("Registered without options found a function")
	}
}
