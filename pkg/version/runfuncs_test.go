package version_test

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/version"
)

// TestWithRunFunc: a registered run function is found by name; a nil
// one, a nameless one and one registered twice are refused.
func TestWithRunFunc(t *testing.T) {
	fn := func(context.Context, *mongo.Database) error { return nil }
	reg, err := version.FromMigrations(nil, version.WithRunFunc("orderTotals", fn))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.RunFunc("orderTotals"); !ok {
		t.Error("orderTotals not found")
	}
	if _, ok := reg.RunFunc("other"); ok {
		t.Error("other found")
	}
	for _, c := range []struct {
		opts []version.Option
		want string
	}{
		{[]version.Option{version.WithRunFunc("a", nil)}, `run func "a" is nil`},
		{[]version.Option{version.WithRunFunc("", fn)}, "needs a name"},
		{[]version.Option{version.WithRunFunc("a", fn), version.WithRunFunc("a", fn)}, `run func "a" is registered twice`},
	} {
		if _, err := version.FromMigrations(nil, c.opts...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}
