package reshape_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/lease"
	"github.com/mongomig/mongomig/pkg/reshape"
)

// losing is a lock that is lost after it allowed n writes.
type losing struct{ n, fenced int }

func (l *losing) Name() string { return lease.MigrationLock }
func (l *losing) Fence(context.Context) error {
	if l.fenced++; l.fenced > l.n {
		return lease.ErrLost
	}
	return nil
}
func (l *losing) Lost() <-chan struct{}         { return nil }
func (l *losing) Release(context.Context) error { return nil }

// TestEmbedFenced: once the lock is lost, the embed writes nothing more
// (every data write and progress save is fenced) and says so.
func TestEmbedFenced(t *testing.T) {
	db := sandboxtest.Database(t, "reshape_embed_fence")
	loadShop(t, db)
	l := &losing{n: 8}
	_, err := reshape.Run(lease.ContextWith(context.Background(), l), db, migrationN(t, 3, shopFile), reshape.Options{Batch: 3})
	if !errors.Is(err, lease.ErrLost) {
		t.Fatalf("run: %v, want the loss", err)
	}
	n, _ := db.Collection("orders").CountDocuments(context.Background(), bson.D{{Key: "productName", Value: bson.D{{Key: "$exists", Value: true}}}})
	if n == 0 || n >= 8 {
		t.Errorf("%d orders written with 8 fenced writes allowed (some progress saves among them)", n)
	}
	if l.fenced != 9 {
		t.Errorf("fenced %d times; want the run to stop at the first refused fence", l.fenced)
	}
	// Resumed under a lock that holds: every copy.
	if _, err := run(t, db, migrationN(t, 3, shopFile), reshape.Options{Batch: 3}); err != nil {
		t.Fatal(err)
	}
	checkShop(t, db, nil)
}

// TestEmbedDownKilledMongoDB: down stops dead at each point it names and
// a new down resumes: no copy left, every other field kept.
func TestEmbedDownKilledMongoDB(t *testing.T) {
	servers(t, "reshape_embed_downkill", func(t *testing.T, db *mongo.Database) {
		ctx := context.Background()
		for _, point := range []string{"reshape.down.read", "reshape.down.unset", "reshape.batch"} {
			for _, at := range []int{1, 4} {
				if err := db.Drop(ctx); err != nil {
					t.Fatal(err)
				}
				loadShop(t, db)
				m := migrationN(t, 3, shopFile)
				if _, err := run(t, db, m, reshape.Options{}); err != nil {
					t.Fatal(err)
				}
				n := 0
				func() {
					defer func() {
						if r := recover(); r != nil && r != errKilled {
							panic(r)
						}
					}()
					_, _ = revert(t, db, m, reshape.Options{Batch: 3, Hook: func(p string, _ int64, _ int) {
						if p == point {
							if n++; n == at {
								panic(errKilled)
							}
						}
					}})
				}()
				if n < at {
					t.Fatalf("%s #%d never reached", point, at)
				}
				if _, err := revert(t, db, m, reshape.Options{Batch: 3}); err != nil {
					t.Fatalf("resume after %s #%d: %v", point, at, err)
				}
				t.Run(fmt.Sprintf("%s#%d", point, at), func(t *testing.T) {
					for coll, f := range map[string]string{"orders": "productName", "students": "classes.name"} {
						if c, _ := db.Collection(coll).CountDocuments(ctx, bson.D{{Key: f, Value: bson.D{{Key: "$exists", Value: true}}}}); c != 0 {
							t.Errorf("%d %s keep %s", c, coll, f)
						}
					}
					if c, _ := db.Collection("students").CountDocuments(ctx, bson.D{{Key: "classes.grade", Value: "A"}}); c != shopStudents {
						t.Errorf("%d students keep their grade, want %d", c, shopStudents)
					}
				})
			}
		}
	})
}
