package release

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/mongomig/mongomig/pkg/version"
)

// DefaultCollection holds the announcements.
const DefaultCollection = "mongomig_releases"

// Defaults of [Options].
const (
	DefaultTTL = 30 * time.Second
	// PruneAfter: [Announce] deletes documents expired for this long (an
	// instance killed without Close).
	PruneAfter = time.Hour
)

// Known is the version a release knows of one collection.
type Known struct {
	Collection string `bson:"collection" json:"collection"`
	Version    int64  `bson:"version" json:"version"`
}

// Release is one announcement as stored.
type Release struct {
	ID       string  `bson:"_id" json:"id"`
	Name     string  `bson:"release" json:"release"`
	Host     string  `bson:"host" json:"host"`
	PID      int     `bson:"pid" json:"pid"`
	Versions []Known `bson:"versions" json:"versions"`
	// AnyCollection: the release accepts documents of collections it does
	// not name, at version 0 (version.AllowUnknownCollections).
	AnyCollection bool      `bson:"anyCollection,omitempty" json:"anyCollection,omitempty"`
	StartedAt     time.Time `bson:"startedAt" json:"startedAt"`
	RenewedAt     time.Time `bson:"renewedAt" json:"renewedAt"`
	ExpiresAt     time.Time `bson:"expiresAt" json:"expiresAt"`
}

// Version is the version r knows of coll (false: r does not read it).
func (r Release) Version(coll string) (int64, bool) {
	for _, k := range r.Versions {
		if k.Collection == coll {
			return k.Version, true
		}
	}
	return 0, r.AnyCollection
}

// String names the release and its instance: "2.3 (host web-1, pid 12)".
func (r Release) String() string {
	return fmt.Sprintf("%s (host %s, pid %d)", r.Name, r.Host, r.PID)
}

// KnownVersions lists what reg upgrades each collection it knows to (0
// for one without upgrades), in name order.
func KnownVersions(reg *version.Registry) []Known {
	out := []Known{}
	for _, c := range reg.Known() {
		out = append(out, Known{Collection: c, Version: reg.Current(c)})
	}
	return out
}

// Behind lists the releases of live that read coll and know only versions
// below target, in their order.
func Behind(live []Release, coll string, target int64) []Release {
	var out []Release
	for _, r := range live {
		if v, ok := r.Version(coll); ok && v < target {
			out = append(out, r)
		}
	}
	return out
}

// BehindError is a step refused because releases that know only versions
// of Collection below Target are live.
type BehindError struct {
	// What was refused: "backfill", "write-back", "closing the window".
	What       string
	Collection string
	Target     int64
	Releases   []Release
}

func (e *BehindError) Error() string {
	return fmt.Sprintf("%s of %s to version %d refused: %s still running", e.What, e.Collection, e.Target, Names(e.Releases, e.Collection))
}

// HeldWindow is a validator window up could close and left open: live
// releases know only versions of Collection below Target.
type HeldWindow struct {
	Collection string    `json:"collection"`
	Target     int64     `json:"target"`
	Releases   []Release `json:"releases"`
	Message    string    `json:"message"`
}

// HoldWindow is coll's validator window, which closing to target would
// refuse the writes of the releases of live behind it, held open (nil:
// no release is behind, it may close).
func HoldWindow(live []Release, coll string, target int64) *HeldWindow {
	behind := Behind(live, coll, target)
	if len(behind) == 0 {
		return nil
	}
	e := BehindError{What: "closing the validator window", Collection: coll, Target: target, Releases: behind}
	return &HeldWindow{Collection: coll, Target: target, Releases: behind,
		Message: e.Error() + ": they write documents the closed window would refuse; it closes on an up once they are gone"}
}

// Names lists releases for a message, with is or are: "release 1.0
// (host web-1, pid 12; knows users up to version 1) is".
func Names(rs []Release, coll string) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		v, _ := r.Version(coll)
		parts[i] = fmt.Sprintf("release %s (host %s, pid %d; knows %s up to version %d)", r.Name, r.Host, r.PID, coll, v)
	}
	if len(parts) == 1 {
		return parts[0] + " is"
	}
	return strings.Join(parts, ", ") + " are"
}

func collection(db *mongo.Database, name string) *mongo.Collection {
	if name == "" {
		name = DefaultCollection
	}
	return db.Collection(name, options.Collection().SetWriteConcern(writeconcern.Majority()))
}

// serverTime is the server's clock (hello's localTime).
func serverTime(ctx context.Context, db *mongo.Database) (time.Time, error) {
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

// Live lists the releases announced in coll (of db; "": the default) whose
// announcement has not expired by the server's clock, by release and host.
func Live(ctx context.Context, db *mongo.Database, coll string) ([]Release, error) {
	now, err := serverTime(ctx, db)
	if err != nil {
		return nil, err
	}
	cur, err := collection(db, coll).Find(ctx, bson.D{{Key: "expiresAt", Value: bson.D{{Key: "$gt", Value: now}}}})
	if err != nil {
		return nil, fmt.Errorf("read the release announcements: %w", err)
	}
	out := []Release{}
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("read the release announcements: %w", err)
	}
	slices.SortFunc(out, func(a, b Release) int {
		return strings.Compare(a.Name+"\x00"+a.Host+"\x00"+a.ID, b.Name+"\x00"+b.Host+"\x00"+b.ID)
	})
	return out, nil
}

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func hostName() string {
	h, _ := os.Hostname()
	return h
}
