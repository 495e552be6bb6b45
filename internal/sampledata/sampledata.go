// Package sampledata writes the sample application's documents, as they
// were before mongomig (version 0), for the demo, the docs and tests. A
// few of them are deliberately invalid under the sample validators.
package sampledata

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Counts is how many documents Load wrote per collection.
type Counts struct {
	Users, Orders, Posts, Comments int
}

// Sizes of the sample data set: small, because the sandbox is slow at
// anything but inserts.
const (
	users    = 40
	orders   = 60
	posts    = 12
	comments = 36
)

var (
	firstNames = []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Margaret", "Ken", "Frances", "John"}
	lastNames  = []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Hamilton", "Thompson", "Allen", "Backus"}
	products   = []struct {
		sku, name string
		price     float64
	}{{"MUG-1", "Mug", 9.5}, {"TEE-2", "T-shirt", 19}, {"BK-3", "Notebook", 4.25}, {"PEN-4", "Pen", 1.5}}
	statuses = []string{"pending", "paid", "shipped", "cancelled"}
)

// ID returns the deterministic ObjectID of the i-th document of a
// collection, so tests and docs can name documents.
func ID(collection string, i int) bson.ObjectID {
	var id bson.ObjectID
	prefix := map[string]byte{"users": 1, "orders": 2, "posts": 3, "comments": 4}[collection]
	id[0], id[1] = 0x65, prefix
	id[8], id[9], id[10], id[11] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
	return id
}

// Load inserts the sample documents at version 0 into db. The same seed
// gives the same documents. Invalid on purpose: users 7 and 23 have no
// email, order 13 has an item with qty 0, comment 5 has empty text.
func Load(ctx context.Context, db *mongo.Database, seed uint64) (Counts, error) {
	rng := rand.New(rand.NewPCG(seed, 1))
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var docs []any
	for i := 0; i < users; i++ {
		first, last := firstNames[i%len(firstNames)], lastNames[(i/len(firstNames)+i)%len(lastNames)]
		d := bson.D{{Key: "_id", Value: ID("users", i)}, {Key: "name", Value: first + " " + last}}
		if i != 7 && i != 23 {
			d = append(d, bson.E{Key: "email", Value: fmt.Sprintf("%s.%s%d@example.com", lower(first), lower(last), i)})
		}
		d = append(d, bson.E{Key: "createdAt", Value: base.Add(time.Duration(i) * 36 * time.Hour)})
		if i%3 == 0 {
			d = append(d, bson.E{Key: "legacyId", Value: int32(1000 + i)})
		}
		docs = append(docs, d)
	}
	if err := insert(ctx, db, "users", docs); err != nil {
		return Counts{}, err
	}
	docs = nil
	for i := 0; i < orders; i++ {
		var items bson.A
		total := 0.0
		for j := 0; j < 1+rng.IntN(3); j++ {
			p := products[rng.IntN(len(products))]
			qty := int32(1 + rng.IntN(3))
			if i == 13 && j == 0 {
				qty = 0
			}
			items = append(items, bson.D{{Key: "sku", Value: p.sku}, {Key: "name", Value: p.name}, {Key: "price", Value: p.price}, {Key: "qty", Value: qty}})
			total += p.price * float64(qty)
		}
		docs = append(docs, bson.D{
			{Key: "_id", Value: ID("orders", i)}, {Key: "userId", Value: ID("users", rng.IntN(users))},
			{Key: "items", Value: items}, {Key: "status", Value: statuses[rng.IntN(len(statuses))]},
			{Key: "createdAt", Value: base.Add(time.Duration(i) * 20 * time.Hour)}, {Key: "total", Value: total},
		})
	}
	if err := insert(ctx, db, "orders", docs); err != nil {
		return Counts{}, err
	}
	docs = nil
	for i := 0; i < posts; i++ {
		docs = append(docs, bson.D{
			{Key: "_id", Value: ID("posts", i)}, {Key: "title", Value: fmt.Sprintf("Release notes %d", i+1)},
			{Key: "authorId", Value: ID("users", i)}, {Key: "publishedAt", Value: base.Add(time.Duration(i) * 240 * time.Hour)},
		})
	}
	if err := insert(ctx, db, "posts", docs); err != nil {
		return Counts{}, err
	}
	docs = nil
	for i := 0; i < comments; i++ {
		text := fmt.Sprintf("Comment %d: thanks for the update.", i)
		if i == 5 {
			text = ""
		}
		docs = append(docs, bson.D{{Key: "_id", Value: ID("comments", i)}, {Key: "postId", Value: ID("posts", i%posts)}, {Key: "text", Value: text}})
	}
	if err := insert(ctx, db, "comments", docs); err != nil {
		return Counts{}, err
	}
	return Counts{Users: users, Orders: orders, Posts: posts, Comments: comments}, nil
}

func insert(ctx context.Context, db *mongo.Database, coll string, docs []any) error {
	if _, err := db.Collection(coll).InsertMany(ctx, docs); err != nil {
		return fmt.Errorf("load sample %s: %w", coll, err)
	}
	return nil
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// FixInvalid repairs the documents Load makes invalid on purpose, as a
// team would after a report or a backfill named them: users 7 and 23 get
// an email, order 13's item quantity 0 becomes 1. (Comment 5's empty text
// stays: the comments validator only warns.)
func FixInvalid(ctx context.Context, db *mongo.Database) error {
	for _, i := range []int{7, 23} {
		if _, err := db.Collection("users").UpdateOne(ctx, bson.D{{Key: "_id", Value: ID("users", i)}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "email", Value: fmt.Sprintf("fixed%d@example.com", i)}}}}); err != nil {
			return err
		}
	}
	_, err := db.Collection("orders").UpdateOne(ctx, bson.D{{Key: "_id", Value: ID("orders", 13)}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "items.0.qty", Value: 1}}}})
	return err
}
