package main

import (
	"bytes"
	"context"
	"encoding/json"
	"expvar"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/internal/sandbox/sandboxtest"
	"github.com/mongomig/mongomig/pkg/version"
)

// stored are users as older releases wrote them: one at each version 0-3,
// and one a newer release (version 4) wrote.
func stored() []bson.D {
	return []bson.D{
		{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: "Ada Lovelace"}, {Key: "email", Value: "ada@example.com"}, {Key: "legacy", Value: true}},
		{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: "Alan Turing"}, {Key: "contact", Value: bson.D{{Key: "email", Value: "alan@example.com"}}}, {Key: "status", Value: "suspended"}, {Key: "version", Value: int32(1)}},
		{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: bson.D{{Key: "first", Value: "Grace"}, {Key: "last", Value: "Hopper"}}}, {Key: "status", Value: "active"}, {Key: "version", Value: int32(2)}},
		{{Key: "_id", Value: bson.NewObjectID()}, {Key: "name", Value: bson.D{{Key: "first", Value: "Edsger"}, {Key: "last", Value: "Dijkstra"}}}, {Key: "status", Value: "active"}, {Key: "plan", Value: "pro"}, {Key: "version", Value: int32(3)}},
		{{Key: "_id", Value: bson.NewObjectID()}, {Key: "fullName", Value: "Barbara Liskov"}, {Key: "version", Value: int32(4)}},
	}
}

// backfilled is what a backfill stores for d, as today's User.
func backfilled(t *testing.T, reg *version.Registry, d bson.D) User {
	t.Helper()
	up, _, err := reg.Upgrade("users", d)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := bson.Marshal(up)
	var u User
	if err := bson.Unmarshal(raw, &u); err != nil {
		t.Fatal(err)
	}
	return u
}

func get(t *testing.T, url string, v any) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusOK && v != nil {
		if err := json.NewDecoder(res.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	return res.StatusCode
}

// TestService reads a collection holding versions 0-4 through the service:
// each old user is served as a backfill would store it, the version 4 one
// is refused with 503 (and left out of the list), inserts are stamped and
// validated, and the upgrades are in the store once the collection is
// closed, counted in the expvar metrics.
func TestService(t *testing.T) {
	ctx := context.Background()
	db := sandboxtest.Database(t, "versionedapp")
	docs := stored()
	for _, d := range docs {
		if _, err := db.Collection("users").InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	metrics := NewMetrics()
	app := NewApp(db, reg, metrics)
	srv := httptest.NewServer(app.Handler())
	defer srv.Close()

	var want []User
	for i, d := range docs[:4] {
		id := d[0].Value.(bson.ObjectID)
		var u User
		if code := get(t, srv.URL+"/users/"+id.Hex(), &u); code != http.StatusOK {
			t.Fatalf("GET version %d: %d", i, code)
		}
		if b := backfilled(t, reg, d); u != b {
			t.Errorf("GET version %d: %+v, a backfill stores %+v", i, u, b)
		}
		want = append(want, u)
	}
	if want[0].Name.First != "Ada" || want[0].Contact.Email != "ada@example.com" || want[0].Plan != "free" {
		t.Errorf("version 0 served as %+v", want[0])
	}
	if code := get(t, srv.URL+"/users/"+docs[4][0].Value.(bson.ObjectID).Hex(), nil); code != http.StatusServiceUnavailable {
		t.Errorf("GET of a version 4 user: %d, want 503", code)
	}
	var list []User
	if code := get(t, srv.URL+"/users", &list); code != http.StatusOK || !reflect.DeepEqual(list, want) {
		t.Errorf("GET /users: %d %+v, want %+v", code, list, want)
	}
	created := post(t, srv.URL+"/users", `{"name": {"first": "Katherine", "last": "Johnson"}, "status": "active", "plan": "pro"}`, http.StatusCreated)
	post(t, srv.URL+"/users", `{"name": {"first": "Nobody"}, "status": "retired", "plan": "free"}`, http.StatusUnprocessableEntity)

	if err := app.Users().Close(ctx); err != nil {
		t.Fatal(err)
	}
	checkStored(t, db.Collection("users"), append(docs, bson.D{{Key: "_id", Value: created.ID}}))
	readAt := metrics.Var().(*expvar.Map).Get("upgradedFrom").(*expvar.Map)
	writeBacks := metrics.Var().(*expvar.Map).Get("writeBacks").(*expvar.Map)
	if n := readAt.Get("0"); n == nil || n.(*expvar.Int).Value() < 1 {
		t.Errorf("upgradedFrom = %s, want version 0 counted", readAt)
	}
	if n := writeBacks.Get("won"); n == nil || n.(*expvar.Int).Value() != 3 || writeBacks.Get("failed") != nil {
		t.Errorf("writeBacks = %s, want the 3 old users won", writeBacks)
	}
}

func post(t *testing.T, url, body string, want int) User {
	t.Helper()
	res, err := http.Post(url, "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var u User
	if res.StatusCode != want {
		t.Fatalf("POST %s: %d, want %d", body, res.StatusCode, want)
	}
	if want == http.StatusCreated {
		if err := json.NewDecoder(res.Body).Decode(&u); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// checkStored: every user but the version 4 one is stored at version 3
// (the old ones written back, the new one stamped); the version 4 one is
// untouched.
func checkStored(t *testing.T, users *mongo.Collection, docs []bson.D) {
	t.Helper()
	for i, d := range docs {
		var got bson.D
		if err := users.FindOne(context.Background(), bson.D{{Key: "_id", Value: d[0].Value}}).Decode(&got); err != nil {
			t.Fatal(err)
		}
		var v any
		for _, e := range got {
			if e.Key == "version" {
				v = e.Value
			}
		}
		switch {
		case i == 4 && !reflect.DeepEqual(got, d):
			t.Errorf("the version 4 user was changed: %v", got)
		case i != 4 && v != int32(3):
			t.Errorf("user %d stored at version %v after Close: %v", i, v, got)
		}
	}
}
