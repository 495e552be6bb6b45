package lease

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Lease is a lease document of the collection: its name and holder.
type Lease struct {
	Name string `bson:"_id" json:"name"`
	Info `bson:",inline"`
	// Expired: the lease ran out by the server's clock (its holder is gone
	// or paused); the next taker removes it.
	Expired bool `bson:"-" json:"expired"`
}

// List returns every lease in coll, sorted by name, each judged by the
// server's clock.
func List(ctx context.Context, coll *mongo.Collection) ([]Lease, error) {
	cur, err := coll.Find(ctx, bson.D{})
	if err != nil {
		return nil, fmt.Errorf("read leases: %w", err)
	}
	var out []Lease
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("read leases: %w", err)
	}
	if len(out) == 0 {
		return []Lease{}, nil
	}
	now, err := ServerTime(ctx, coll.Database())
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Expired = !out[i].ExpiresAt.After(now)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ErrLive is returned (wrapped) by [Remove] without force for a lease that
// has not expired.
var ErrLive = errors.New("its lease has not expired")

// LiveError is [Remove] without force refused: lease Name is held by
// Holder and has not expired. It wraps [ErrLive].
type LiveError struct {
	Name   string
	Holder Info
}

func (e *LiveError) Error() string { return e.Message("a forced removal") }

// Message is the error's message with force (what removes a live lease,
// as the caller words it) after "wait for the lease or use ".
func (e *LiveError) Message(force string) string {
	return fmt.Sprintf("the %s is held by %s and %v; if that process is gone, wait for the lease or use %s", Describe(e.Name), e.Holder, ErrLive, force)
}

func (e *LiveError) Unwrap() error { return ErrLive }

// Remove deletes the lease name: without force only if it expired by the
// server's clock, with force whatever its lease (for a holder known to be
// dead: a live holder finds its token gone at its next fence and stops).
// It returns the removed holder, nil if none was held.
func Remove(ctx context.Context, coll *mongo.Collection, name string, force bool) (*Info, error) {
	var l stored
	switch err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&l); {
	case errors.Is(err, mongo.ErrNoDocuments):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read lease %s: %w", name, err)
	}
	now, err := ServerTime(ctx, coll.Database())
	if err != nil {
		return nil, err
	}
	if l.ExpiresAt.After(now) && !force {
		return &l.Info, &LiveError{Name: name, Holder: l.Info}
	}
	if _, err := majority(coll).DeleteOne(ctx, bson.D{{Key: "_id", Value: name}, {Key: "owner", Value: l.Owner}, {Key: "acquiredAt", Value: l.AcquiredAt}}); err != nil {
		return &l.Info, fmt.Errorf("remove lease %s: %w", name, err)
	}
	return &l.Info, nil
}
