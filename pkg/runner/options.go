package runner

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mongomig/mongomig/internal/bsonx"
	"github.com/mongomig/mongomig/pkg/events"
	"github.com/mongomig/mongomig/pkg/probe"
	"github.com/mongomig/mongomig/pkg/version"
)

// Option configures [New]. Each validates its input.
type Option interface{ apply(*config) error }

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

type config struct {
	ledger, lock string
	lease, wait  time.Duration
	allowDrift   bool
	versionField string
	// versionFieldSet: WithVersionField was given.
	versionFieldSet bool
	log             events.Logger
	owner           string
	toolVersion     string
	versionOpts     []version.Option
	renewInterval   time.Duration
	// forceTransactions: tie ledger writes to the lock by a transaction
	// without asking the server (tests, see export_test.go).
	forceTransactions bool
	// clientSide: collections whose validator is applied client-side
	// only (WithClientSideValidators); caps: the server's capabilities,
	// given or probed once (enforce.go).
	clientSide []string
	caps       *probe.Capabilities
	// lifecycle: the server's lifecycle features, probed once
	// (lifecycle.go); expiryBatch and expiryPause: how an expired backlog
	// is deleted (internal/expiry).
	lifecycle   *probe.LifecycleSupport
	expiryBatch int
	expiryPause time.Duration
	// validation: the server's errorAndLog and constraint, given
	// (WithValidationSettings) or probed once (constraint.go).
	validation *probe.ValidationSettings
	// allowOldReleases: tighten while older releases are live (releases.go).
	allowOldReleases bool
	// bucketsAt, set only by tests (buckets_export_test.go), is the time
	// up's run of the families brings them to (zero: the server's clock).
	bucketsAt time.Time
}

// Defaults.
const (
	DefaultLedgerCollection = "mongomig_migrations"
	DefaultLockCollection   = "mongomig_lock"
	DefaultLockLease        = 30 * time.Second
	DefaultLockWait         = 5 * time.Minute
)

func defaultConfig() config {
	host, _ := os.Hostname()
	return config{
		ledger:       DefaultLedgerCollection,
		lock:         DefaultLockCollection,
		lease:        DefaultLockLease,
		wait:         DefaultLockWait,
		versionField: version.DefaultField,
		log:          events.Discard,
		owner:        fmt.Sprintf("%s-%d-%s", host, os.Getpid(), bsonx.RandomHex(4)),
		toolVersion:  "dev",
	}
}

func checkCollectionName(name string) error {
	if name == "" || strings.ContainsAny(name, "$\x00") || strings.HasPrefix(name, "system.") {
		return fmt.Errorf("invalid collection name %q", name)
	}
	return nil
}

// WithLedgerCollection names the ledger collection (default mongomig_migrations).
func WithLedgerCollection(name string) Option {
	return optionFunc(func(c *config) error {
		if err := checkCollectionName(name); err != nil {
			return fmt.Errorf("ledger collection: %w", err)
		}
		c.ledger = name
		return nil
	})
}

// WithLockCollection names the lock collection (default mongomig_lock).
func WithLockCollection(name string) Option {
	return optionFunc(func(c *config) error {
		if err := checkCollectionName(name); err != nil {
			return fmt.Errorf("lock collection: %w", err)
		}
		c.lock = name
		return nil
	})
}

// WithLockLease sets how long the lock is held without a heartbeat
// (default 30s; at least 1s). A crashed process's lock is taken over after
// it expires. The heartbeat renews it every quarter of the lease.
func WithLockLease(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < time.Second {
			return fmt.Errorf("lock lease %v is shorter than 1s", d)
		}
		c.lease = d
		return nil
	})
}

// WithLockWait sets how long Up and Down wait for a lock another process
// holds before failing with [ErrLockTimeout] (default 5m; 0 fails at once).
func WithLockWait(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < 0 {
			return fmt.Errorf("lock wait %v is negative", d)
		}
		c.wait = d
		return nil
	})
}

// WithAllowDrift lets Up proceed when applied files were edited.
func WithAllowDrift(allow bool) Option {
	return optionFunc(func(c *config) error {
		c.allowDrift = allow
		return nil
	})
}

// WithVersionField names the documents' version field (default "version").
func WithVersionField(name string) Option {
	return optionFunc(func(c *config) error {
		c.versionField, c.versionFieldSet = name, true
		c.versionOpts = append(c.versionOpts, version.WithField(name))
		return nil
	})
}

// WithVersionOptions passes options to the version registry the runner
// builds (to register the Go functions of func steps, say).
func WithVersionOptions(opts ...version.Option) Option {
	return optionFunc(func(c *config) error {
		c.versionOpts = append(c.versionOpts, opts...)
		return nil
	})
}

// WithLogger receives what the runner does, as typed entries (see
// package events); the runner never prints.
func WithLogger(l events.Logger) Option {
	return optionFunc(func(c *config) error {
		if l == nil {
			return errors.New("nil logger")
		}
		c.log = l
		return nil
	})
}

// WithOwner sets the lock owner id (default host-pid-random).
func WithOwner(owner string) Option {
	return optionFunc(func(c *config) error {
		if owner == "" {
			return errors.New("empty lock owner")
		}
		c.owner = owner
		return nil
	})
}

// WithToolVersion sets the version recorded in the ledger.
func WithToolVersion(v string) Option {
	return optionFunc(func(c *config) error {
		c.toolVersion = v
		return nil
	})
}
