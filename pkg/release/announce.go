package release

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongomig/mongomig/pkg/version"
)

// Options configure [Announce].
type Options struct {
	// Name is the release (a version, a commit): required.
	Name string
	// TTL is how long an announcement lives without a renewal (default
	// [DefaultTTL]). Renew is the heartbeat's interval (default TTL/3).
	TTL, Renew time.Duration
	// Collection holds the announcements ("": [DefaultCollection]).
	Collection string
	// OnError receives a failed renewal (the heartbeat retries at its next
	// tick); OnGap a renewal that found the announcement had expired.
	OnError func(error)
	OnGap   func(Gap)
}

// Gap is a time the announcement was expired, by the server's clock:
// from the expiry it missed to the renewal that found it.
type Gap struct{ From, To time.Time }

// Announcement is a live announcement and its heartbeat; it also tells
// the write-back policy of pkg/version/versioned whether a release behind
// is live ([Announcement.WriteBackOpen]).
type Announcement struct {
	db       *mongo.Database
	coll     *mongo.Collection
	opts     Options
	release  Release
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	gaps     atomic.Int64
	paused   chan struct{} // tests: the heartbeat waits while it is non-nil and open
	mu       sync.Mutex
	expires  time.Time // the last renewal's expiresAt (server time)
	live     []Release // the live releases as of the last renewal
	liveRead time.Time // when (monotonic, local) live was read; zero: never
}

// Announce writes the announcement of the release opts.Name knowing reg's
// versions, prunes documents expired for [PruneAfter], and starts the
// heartbeat; [Announcement.Close] stops it and deletes the announcement.
func Announce(ctx context.Context, db *mongo.Database, reg *version.Registry, opts Options) (*Announcement, error) {
	if opts.Name == "" {
		return nil, errors.New("announce a release: give its name (Options.Name)")
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Renew <= 0 {
		opts.Renew = opts.TTL / 3
	}
	if opts.Renew >= opts.TTL {
		return nil, fmt.Errorf("announce release %s: Renew %v must be shorter than TTL %v, or the announcement expires between renewals", opts.Name, opts.Renew, opts.TTL)
	}
	a := &Announcement{db: db, coll: collection(db, opts.Collection), opts: opts,
		release: Release{ID: newID(), Name: opts.Name, Host: hostName(), PID: os.Getpid(), Versions: KnownVersions(reg), AnyCollection: reg.AllowsUnknown()},
		stop:    make(chan struct{}), done: make(chan struct{})}
	now, err := a.renew(ctx)
	if err != nil {
		return nil, fmt.Errorf("announce release %s: %w", opts.Name, err)
	}
	if _, err := a.coll.DeleteMany(ctx, bson.D{{Key: "expiresAt", Value: bson.D{{Key: "$lt", Value: now.Add(-PruneAfter)}}}}); err != nil {
		return nil, fmt.Errorf("announce release %s: prune expired announcements: %w", opts.Name, err)
	}
	go a.heartbeat()
	return a, nil
}

// Release is the announcement as written.
func (a *Announcement) Release() Release {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.release
	r.ExpiresAt = a.expires
	return r
}

// Gaps counts the renewals that found the announcement expired.
func (a *Announcement) Gaps() int64 { return a.gaps.Load() }

// renew writes the announcement (an upsert of its fields, so one pruned
// or removed comes back) with expiresAt = the server's time + TTL, then
// reads the live releases for WriteBackOpen.
func (a *Announcement) renew(ctx context.Context) (time.Time, error) {
	now, err := serverTime(ctx, a.db)
	if err != nil {
		return now, err
	}
	a.mu.Lock()
	r, prev := a.release, a.expires
	a.mu.Unlock()
	if r.StartedAt.IsZero() {
		r.StartedAt = now
	}
	set := bson.D{{Key: "release", Value: r.Name}, {Key: "host", Value: r.Host}, {Key: "pid", Value: r.PID},
		{Key: "versions", Value: r.Versions}, {Key: "anyCollection", Value: r.AnyCollection}, {Key: "startedAt", Value: r.StartedAt},
		{Key: "renewedAt", Value: now}, {Key: "expiresAt", Value: now.Add(a.opts.TTL)}}
	if _, err := a.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: r.ID}}, bson.D{{Key: "$set", Value: set}}, options.UpdateOne().SetUpsert(true)); err != nil {
		return now, fmt.Errorf("renew the announcement: %w", err)
	}
	a.mu.Lock()
	a.release.StartedAt, a.release.RenewedAt, a.expires = r.StartedAt, now, now.Add(a.opts.TTL)
	a.mu.Unlock()
	if !prev.IsZero() && !prev.After(now) {
		a.gaps.Add(1)
		if a.opts.OnGap != nil {
			a.opts.OnGap(Gap{From: prev, To: now})
		}
	}
	sent := time.Now()
	live, err := Live(ctx, a.db, a.opts.Collection)
	if err != nil {
		return now, err
	}
	a.mu.Lock()
	a.live, a.liveRead = live, sent
	a.mu.Unlock()
	return now, nil
}

func (a *Announcement) heartbeat() {
	defer close(a.done)
	t := time.NewTicker(a.opts.Renew)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		a.waitPaused()
		select {
		case <-a.stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), a.opts.TTL)
		_, err := a.renew(ctx)
		cancel()
		if err != nil && a.opts.OnError != nil {
			a.opts.OnError(err)
		}
	}
}

// Close stops the heartbeat and deletes the announcement (also when ctx
// was cancelled, bounded by the TTL). It is idempotent.
func (a *Announcement) Close(ctx context.Context) error {
	var err error
	a.once.Do(func() {
		close(a.stop)
		a.resume()
		<-a.done
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.opts.TTL)
		defer cancel()
		if _, derr := a.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: a.release.ID}}); derr != nil {
			err = fmt.Errorf("remove the announcement of release %s: %w", a.opts.Name, derr)
		}
	})
	return err
}

// WriteBackOpen says whether a write-back of coll to version may be sent:
// the live releases the last renewal read (within the TTL) include none
// behind for coll and version. A failed or stale read closes it. It never
// blocks on the server (pkg/version/versioned's write-back gate).
func (a *Announcement) WriteBackOpen(coll string, version int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.liveRead.IsZero() || time.Since(a.liveRead) > a.opts.TTL {
		return false
	}
	return len(Behind(a.live, coll, version)) == 0
}

// Behind lists the releases the last renewal saw live that are behind for
// coll and version (who a held write-back waits for).
func (a *Announcement) Behind(coll string, version int64) []Release {
	a.mu.Lock()
	defer a.mu.Unlock()
	return Behind(a.live, coll, version)
}
