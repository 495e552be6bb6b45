package main

import (
	"embed"
	"encoding/json"
	"errors"
	"expvar"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/version"
	"github.com/mongomig/mongomig/pkg/version/versioned"
)

//go:embed migrations/*.yaml
var migrationFiles embed.FS

// NewRegistry builds the registry from the embedded migrations and the Go
// function that `func: splitName` names. Call it once at start-up.
func NewRegistry() (*version.Registry, error) {
	files, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	return version.New(files, version.WithFunc("splitName", SplitName))
}

// SplitName is the `func: splitName` step of 0002_split_name.yaml:
// {name: "Ada Lovelace"} becomes {name: {first: "Ada", last: "Lovelace"}}.
func SplitName(doc bson.D) (bson.D, error) {
	for i, e := range doc {
		if e.Key != "name" {
			continue
		}
		switch name := e.Value.(type) {
		case bson.D:
			return doc, nil // already split
		case string:
			first, last, _ := strings.Cut(strings.TrimSpace(name), " ")
			doc[i].Value = bson.D{{Key: "first", Value: first}, {Key: "last", Value: last}}
			return doc, nil
		default:
			return nil, fmt.Errorf("name is a %T, not a string", name)
		}
	}
	return doc, nil
}

// User is today's shape of a users document (version 3). Older shapes
// live in the migrations; the version field is not part of the model.
type User struct {
	ID      bson.ObjectID `bson:"_id" json:"id"`
	Name    Name          `bson:"name" json:"name"`
	Contact Contact       `bson:"contact,omitempty" json:"contact"`
	Status  string        `bson:"status" json:"status"`
	Plan    string        `bson:"plan" json:"plan"`
}

// Name is a user's name, split (version 2 on).
type Name struct {
	First string `bson:"first" json:"first"`
	Last  string `bson:"last" json:"last"`
}

// Contact holds how to reach a user (version 1 on).
type Contact struct {
	Email string `bson:"email,omitempty" json:"email,omitempty"`
}

// Metrics counts, for /debug/vars, the users documents read at each old
// version ("documents still read at version k": when they stop, a
// backfill has little left to do) and what became of their write-backs.
type Metrics struct {
	vars       expvar.Map
	readAt     expvar.Map // version read -> upgrades
	writeBacks expvar.Map // won, lost, dropped, failed
}

// NewMetrics returns metrics to publish with expvar.Publish(name, m.Var()).
func NewMetrics() *Metrics {
	m := &Metrics{}
	m.vars.Init()
	m.readAt.Init()
	m.writeBacks.Init()
	m.vars.Set("upgradedFrom", &m.readAt)
	m.vars.Set("writeBacks", &m.writeBacks)
	return m
}

// Var is the metrics as one expvar variable.
func (m *Metrics) Var() expvar.Var { return &m.vars }

// Observe is the collection's observer (versioned.WithObserver): counters
// only, no I/O, safe for concurrent use.
func (m *Metrics) Observe(e versioned.Event) {
	switch e.Kind {
	case versioned.Upgraded:
		m.readAt.Add(strconv.FormatInt(e.From, 10), 1)
	case versioned.WroteBack:
		if e.Won {
			m.writeBacks.Add("won", 1)
		} else {
			m.writeBacks.Add("lost", 1)
		}
	case versioned.Flushed:
		m.writeBacks.Add("won", int64(e.Matched))
		m.writeBacks.Add("lost", int64(e.Count-e.Matched))
	case versioned.Dropped:
		m.writeBacks.Add("dropped", 1)
	case versioned.Failed:
		m.writeBacks.Add("failed", int64(e.Count))
	}
}

// App serves users over HTTP.
type App struct {
	users *versioned.Collection
}

// NewApp wraps the users collection once, at start-up: every read
// through it upgrades, every insert is stamped and validated, and
// upgrades are written back in the background, at most 50 to a bulk
// write (fewer while the server answers slowly).
// Close it before disconnecting the client.
func NewApp(db *mongo.Database, reg *version.Registry, m *Metrics) *App {
	users := versioned.New(db.Collection("users"), reg,
		versioned.WithDeferred(versioned.DeferredOptions{Queue: 1024, Batch: 50}),
		versioned.WithValidation(),
		versioned.WithObserver(m.Observe),
	)
	return &App{users: users}
}

// Users is the wrapped collection (Close, Stats).
func (a *App) Users() *versioned.Collection { return a.users }

// Handler routes GET /users/{id}, GET /users and POST /users.
func (a *App) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", a.getUser)
	mux.HandleFunc("GET /users", a.listUsers)
	mux.HandleFunc("POST /users", a.createUser)
	return mux
}

// getUser answers one user, whatever version it was stored at.
func (a *App) getUser(w http.ResponseWriter, r *http.Request) {
	id, err := bson.ObjectIDFromHex(r.PathValue("id"))
	if err != nil {
		http.Error(w, "invalid id", http.StatusBadRequest)
		return
	}
	var u User
	err = a.users.FindOne(r.Context(), bson.D{{Key: "_id", Value: id}}).Decode(&u)
	if err != nil {
		http.Error(w, err.Error(), status(err))
		return
	}
	writeJSON(w, http.StatusOK, u)
}

// listUsers answers every user; one a newer release wrote is left out.
func (a *App) listUsers(w http.ResponseWriter, r *http.Request) {
	cur, err := a.users.Find(r.Context(), bson.D{})
	if err != nil {
		http.Error(w, err.Error(), status(err))
		return
	}
	defer cur.Close(r.Context())
	users := []User{}
	for cur.Next(r.Context()) {
		var u User
		var tooNew *version.TooNewError
		switch err := cur.Decode(&u); {
		case errors.As(err, &tooNew):
			continue // an instance of the newer release serves it
		case err != nil:
			http.Error(w, err.Error(), status(err))
			return
		}
		users = append(users, u)
	}
	if err := cur.Err(); err != nil {
		http.Error(w, err.Error(), status(err))
		return
	}
	writeJSON(w, http.StatusOK, users)
}

// createUser stores a new user: stamped with the current version and
// checked against the current validator by the collection.
func (a *App) createUser(w http.ResponseWriter, r *http.Request) {
	var u User
	if err := json.NewDecoder(r.Body).Decode(&u); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	u.ID = bson.NewObjectID()
	if _, err := a.users.InsertOne(r.Context(), u); err != nil {
		http.Error(w, err.Error(), status(err))
		return
	}
	writeJSON(w, http.StatusCreated, u)
}

// status is the HTTP status for an error of the users collection.
func status(err error) int {
	var (
		tooNew  *version.TooNewError
		invalid *version.InvalidError
	)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return http.StatusNotFound
	case errors.As(err, &tooNew):
		// A newer release wrote it: never guess its shape (a silent zero
		// value); an instance of the newer release can serve it.
		return http.StatusServiceUnavailable
	case errors.As(err, &invalid):
		return http.StatusUnprocessableEntity
	default:
		return http.StatusInternalServerError
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
