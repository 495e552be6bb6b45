package lease

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// DefaultLease is the lease when [Options.Lease] is zero.
const DefaultLease = 30 * time.Second

// Options configure [Acquire].
type Options struct {
	// Lease is how long the lease holds without a renewal (default
	// [DefaultLease]).
	Lease time.Duration
	// Wait is how long to wait for a live holder before failing with a
	// [*TimeoutError] (0: one attempt).
	Wait time.Duration
	// Owner names the holder to others (status, unlock, waiting messages).
	Owner string
	// Command says what the holder runs ("up", "backfill"), for the same
	// messages; it never holds the command line (which may hold a URI).
	Command string
	// Events, if set, receives what happens: waiting, taken over, acquired,
	// released.
	Events func(Event)
}

// EventKind names a step of a lease's life.
type EventKind string

// Events, in the order they happen.
const (
	EventWaiting   EventKind = "waiting"   // a live holder has it; Holder says who and until when
	EventTakenOver EventKind = "takenOver" // a lease expired by the server's clock was removed
	EventAcquired  EventKind = "acquired"
	EventReleased  EventKind = "released"
)

// Event is one step; Holder is the other holder (waiting, taken over).
type Event struct {
	Kind    EventKind
	Name    string
	Holder  *Info
	Message string
}

// Info describes a lease holder.
type Info struct {
	Owner      string    `bson:"owner" json:"owner"`
	Command    string    `bson:"command,omitempty" json:"command,omitempty"`
	Host       string    `bson:"host" json:"host"`
	PID        int       `bson:"pid" json:"pid"`
	AcquiredAt time.Time `bson:"acquiredAt" json:"acquiredAt"`
	ExpiresAt  time.Time `bson:"expiresAt" json:"expiresAt"`
}

func (l Info) String() string {
	return fmt.Sprintf("%s, taken %s, lease until %s", l.Holder(), l.AcquiredAt.UTC().Format(time.RFC3339), l.ExpiresAt.UTC().Format(time.RFC3339))
}

// Holder names the holder: its command, owner, host and pid.
func (l Info) Holder() string {
	who := fmt.Sprintf("%s (host %s, pid %d)", l.Owner, l.Host, l.PID)
	if l.Command != "" {
		return fmt.Sprintf("`mongomig %s` %s", l.Command, who)
	}
	return who
}

// ErrTimeout is returned (wrapped in a [*TimeoutError]) when another
// process held the lease for longer than the configured wait.
var ErrTimeout = errors.New("lease not acquired in time")

// MigrationLock is the name of the lease up and down take: the one that
// messages call "the migration lock".
const MigrationLock = "mongomig"

// Describe names a lease in a message: "migration lock" for
// [MigrationLock], "lease NAME" for any other.
func Describe(name string) string {
	if name == MigrationLock {
		return "migration lock"
	}
	return "lease " + name
}

// TimeoutError names the lease and its holder.
type TimeoutError struct {
	Name   string
	Holder Info
	Waited time.Duration
}

func (e *TimeoutError) Error() string { return e.Message("a forced removal of the lease frees it") }

// Message is the error's message with force (what frees the lease at
// once, as the caller words it) after "expires by itself, or ".
func (e *TimeoutError) Message(force string) string {
	return fmt.Sprintf("%s not acquired in time: held by %s after waiting %v; if that process is gone, its lease expires by itself, or %s",
		Describe(e.Name), e.Holder, e.Waited.Round(time.Millisecond), force)
}

func (e *TimeoutError) Unwrap() error { return ErrTimeout }

// ErrLost is returned by [Held.Fence] (and by whatever a caller stops with
// it) when the lease may have expired or is no longer this acquisition's:
// a [*LostError] wraps it and says which lease and why (the server did not
// answer, the token is gone, it expired).
var ErrLost = errors.New("lease lost")

// Margin is subtracted from the lease when fencing: renewals run every
// quarter of the lease, so a holder whose renewals fail still has a retry
// before it fences.
func Margin(lease time.Duration) time.Duration { return lease / 5 }

// ServerTime asks the server for its clock (hello's localTime), so that
// lease expiry never depends on the clocks of the machines running mongomig.
func ServerTime(ctx context.Context, db *mongo.Database) (time.Time, error) {
	var hello struct {
		LocalTime time.Time `bson:"localTime"`
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		return time.Time{}, fmt.Errorf("read server time: %w", err)
	}
	if hello.LocalTime.IsZero() {
		return time.Time{}, errors.New("read server time: hello has no localTime")
	}
	return hello.LocalTime, nil
}

// majority is coll with majority write concern: every lease write uses it.
func majority(coll *mongo.Collection) *mongo.Collection {
	return coll.Clone(options.Collection().SetWriteConcern(writeconcern.Majority()))
}

// stored is a lease document as read back.
type stored struct {
	Info  `bson:",inline"`
	Token string `bson:"token,omitempty"`
}

// Acquire takes the lease name in coll, waiting up to opts.Wait while a
// live process holds it and taking over a lease that expired by the
// server's clock. The returned lease renews itself until released.
func Acquire(ctx context.Context, coll *mongo.Collection, name string, opts Options) (*Held, error) {
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Events == nil {
		opts.Events = func(Event) {}
	}
	coll = majority(coll)
	host, _ := os.Hostname()
	start := time.Now()
	announced := false
	for attempt := 0; ; attempt++ {
		sent := time.Now()
		now, err := ServerTime(ctx, coll.Database())
		if err != nil {
			return nil, err
		}
		token := newToken()
		doc := bson.D{
			{Key: "_id", Value: name}, {Key: "owner", Value: opts.Owner}, {Key: "command", Value: opts.Command}, {Key: "token", Value: token}, {Key: "host", Value: host},
			{Key: "pid", Value: os.Getpid()}, {Key: "acquiredAt", Value: now}, {Key: "expiresAt", Value: now.Add(opts.Lease)},
		}
		_, err = coll.InsertOne(ctx, doc)
		if err == nil {
			opts.Events(Event{Kind: EventAcquired, Name: name, Message: name + " acquired by " + opts.Owner})
			return newHeld(coll, name, token, opts, sent), nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return nil, fmt.Errorf("acquire lease %s in %s: %w", name, coll.Name(), err)
		}
		var holder stored
		switch err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&holder); {
		case errors.Is(err, mongo.ErrNoDocuments):
			continue // released between our insert and our read
		case err != nil:
			return nil, fmt.Errorf("read the holder of lease %s: %w", name, err)
		}
		if !holder.ExpiresAt.After(now) {
			took, err := takeOver(ctx, coll, name, holder)
			if err != nil {
				return nil, err
			}
			if took { // else another contender removed it first
				opts.Events(Event{Kind: EventTakenOver, Name: name, Holder: &holder.Info, Message: "took over the expired lease " + name + " of " + holder.Info.String()})
			}
			continue
		}
		waited := time.Since(start)
		if waited >= opts.Wait {
			return nil, &TimeoutError{Name: name, Holder: holder.Info, Waited: waited}
		}
		if !announced {
			opts.Events(Event{Kind: EventWaiting, Name: name, Holder: &holder.Info, Message: "waiting for the lease " + name + " held by " + holder.Info.String()})
			announced = true
		}
		// Jittered backoff, capped by the remaining wait and the lease.
		sleep := min(time.Duration(100+rand.IntN(200))*time.Millisecond*time.Duration(min(attempt+1, 8)), opts.Wait-waited, holder.ExpiresAt.Sub(now)+50*time.Millisecond)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(max(sleep, 10*time.Millisecond)):
		}
	}
}

// takeOver deletes exactly the stale document read: the same holder,
// acquisition and expiry (a renewed or re-acquired lease differs). It
// reports whether it deleted it.
func takeOver(ctx context.Context, coll *mongo.Collection, name string, holder stored) (bool, error) {
	filter := bson.D{{Key: "_id", Value: name}, {Key: "owner", Value: holder.Owner}, {Key: "acquiredAt", Value: holder.AcquiredAt}, {Key: "expiresAt", Value: holder.ExpiresAt}}
	if holder.Token != "" {
		filter = append(filter, bson.E{Key: "token", Value: holder.Token})
	}
	res, err := coll.DeleteOne(ctx, filter)
	if err != nil {
		return false, fmt.Errorf("take over the expired lease %s: %w", name, err)
	}
	return res.DeletedCount == 1, nil
}

func newToken() string {
	return fmt.Sprintf("%016x%016x", rand.Uint64(), rand.Uint64())
}
