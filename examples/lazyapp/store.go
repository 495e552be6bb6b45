package lazyapp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/mongomig/mongomig/pkg/version"
)

// Users is the collection the store reads and writes.
const Users = "users"

// User is today's shape of a users document (version 2). The version field
// is left out: mongomig owns it, and the store stamps it on every write.
type User struct {
	ID      bson.ObjectID `bson:"_id"`
	Name    Name          `bson:"name"`
	Contact Contact       `bson:"contact"`
	Status  string        `bson:"status"`
}

// Name is a user's name, split since migration 2.
type Name struct {
	First string `bson:"first"`
	Last  string `bson:"last"`
}

// Contact holds a user's addresses, since migration 1.
type Contact struct {
	Email string `bson:"email,omitempty"`
}

// Store reads and writes users through the registry.
type Store struct {
	users *mongo.Collection
	reg   *version.Registry
}

// NewStore returns a store of the users of db. reg is the registry built
// once at start-up (see [NewRegistry]).
func NewStore(db *mongo.Database, reg *version.Registry) *Store {
	return &Store{users: db.Collection(Users), reg: reg}
}

// Get reads one user, whatever version it was written at, as today's User.
// A document that needed an upgrade is written back.
func (s *Store) Get(ctx context.Context, id bson.ObjectID) (User, error) {
	var raw bson.Raw
	err := s.users.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&raw)
	if err != nil {
		return User{}, err
	}
	upgraded, changed, err := s.reg.UpgradeRaw(Users, raw)
	if err != nil {
		return User{}, err // *version.TooNewError, *version.UpgradeError
	}
	if changed {
		if _, err := s.writeBack(ctx, raw, upgraded); err != nil {
			return User{}, err
		}
	}
	var u User
	if err := bson.Unmarshal(upgraded, &u); err != nil {
		return User{}, fmt.Errorf("decode user %s: %w", id.Hex(), err)
	}
	return u, nil
}

// writeBack persists an upgrade read as raw BSON. WriteBack compares
// bson.D documents, so both are decoded: only for documents that needed an
// upgrade, never on the hot path. won is false when another writer changed
// one of the upgraded fields since the read: nothing was written and their
// change stands.
func (s *Store) writeBack(ctx context.Context, raw, upgraded bson.Raw) (won bool, err error) {
	var stored, after bson.D
	if err := bson.Unmarshal(raw, &stored); err != nil {
		return false, err
	}
	if err := bson.Unmarshal(upgraded, &after); err != nil {
		return false, err
	}
	return s.reg.WriteBack(ctx, s.users, stored, after)
}

// Find reads the users that match filter as bson.D, for code without a
// model (admin views, scripts), upgrading each and writing the upgrade back.
func (s *Store) Find(ctx context.Context, filter bson.D) ([]bson.D, error) {
	cur, err := s.users.Find(ctx, filter)
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	var docs []bson.D
	for cur.Next(ctx) {
		var stored bson.D
		if err := cur.Decode(&stored); err != nil {
			return nil, err
		}
		upgraded, changed, err := s.reg.Upgrade(Users, stored)
		if err != nil {
			return nil, err
		}
		if changed {
			if _, err := s.reg.WriteBack(ctx, s.users, stored, upgraded); err != nil {
				return nil, err
			}
		}
		docs = append(docs, upgraded)
	}
	return docs, cur.Err()
}

// Insert stores a new user, stamped with the current version and checked
// against the current validator before it is sent. A zero ID gets a new
// ObjectID; the ID stored is returned.
func (s *Store) Insert(ctx context.Context, u User) (bson.ObjectID, error) {
	if u.ID.IsZero() {
		u.ID = bson.NewObjectID()
	}
	doc, err := s.document(u)
	if err != nil {
		return bson.ObjectID{}, err
	}
	if _, err := s.users.InsertOne(ctx, doc); err != nil {
		return bson.ObjectID{}, err
	}
	return u.ID, nil
}

// Replace overwrites a user with today's shape and reports whether it
// existed. Like every write of a whole document it stamps the version: a
// replacement without the field would be read as version 0 and upgraded
// again.
func (s *Store) Replace(ctx context.Context, u User) (bool, error) {
	doc, err := s.document(u)
	if err != nil {
		return false, err
	}
	res, err := s.users.ReplaceOne(ctx, bson.D{{Key: "_id", Value: u.ID}}, doc)
	if err != nil {
		return false, err
	}
	return res.MatchedCount == 1, nil
}

// document turns a User into the document to write: today's shape, stamped
// with the current version, and valid against the current validator, which
// the server may not enforce (FerretDB, some managed services).
func (s *Store) document(u User) (bson.D, error) {
	raw, err := bson.Marshal(u)
	if err != nil {
		return nil, err
	}
	var doc bson.D
	if err := bson.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	// Stamp refuses a collection no migration names (a typo would stamp
	// version 0 and make the next backfill re-run every upgrade).
	if doc, err = s.reg.Stamp(Users, doc); err != nil {
		return nil, err // *version.UnknownCollectionError
	}
	if err := s.reg.Validate(Users, doc); err != nil {
		return nil, err // *version.InvalidError: every failing field and rule
	}
	return doc, nil
}

// HTTPStatus is the status an HTTP handler answers for an error of the
// store.
func HTTPStatus(err error) int {
	var (
		tooNew  *version.TooNewError
		invalid *version.InvalidError
	)
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, mongo.ErrNoDocuments):
		return http.StatusNotFound
	case errors.As(err, &tooNew):
		// A newer release wrote this document and this instance is older
		// (a rollback, or a rolling deploy half done). Refuse rather than
		// guess what its fields mean, and never write it back: an
		// instance of the newer release can serve it.
		return http.StatusServiceUnavailable
	case errors.As(err, &invalid):
		return http.StatusUnprocessableEntity
	default:
		return http.StatusInternalServerError // *version.UpgradeError among others
	}
}
