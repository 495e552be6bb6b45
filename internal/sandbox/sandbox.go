package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

// Options configure [Start].
type Options struct {
	// Dir is the directory the server stores its SQLite files in; it is
	// created if missing and data persists across runs. Empty means a new
	// temporary directory, removed on Stop. (FerretDB's in-memory SQLite
	// mode is not used: an update after an insert hangs in it.)
	Dir string

	// Logger receives the server's own log records. Nil discards them.
	Logger *slog.Logger

	// Addr is the TCP address to listen on; empty means a free loopback
	// port. Tests that restart a server under a running client give the
	// old address again.
	Addr string

	// Notify receives a one-line notice for each repair Start made to what
	// a killed process left in Dir (see docs/sandbox.md). Nil logs them to
	// Logger as warnings.
	Notify func(msg string)
}

// Server is a running embedded server. Stop it with [Server.Stop].
type Server struct {
	uri    string
	dir    string
	cancel context.CancelFunc
	done   chan error
	proxy  *proxy
	tuner  *tuner
	once   sync.Once
}

// Start starts a server listening on a free loopback TCP port. It returns once
// the server accepts connections. It first repairs what a process killed
// while serving the directory may have left (see the package comment), and
// fails with a [*DamagedError] on a database file it cannot repair safely.
func Start(opts Options) (*Server, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	abs, temp, err := storage(opts.Dir)
	if err != nil {
		return nil, err
	}
	err = checkDirFiles(abs)
	var lock *os.File
	if err == nil {
		lock, err = lockDir(abs)
	}
	if err != nil {
		if temp {
			_ = os.RemoveAll(abs)
		}
		return nil, err
	}
	// unlock releases the directory once the server has stopped (or did
	// not start).
	unlock := func() { _ = lock.Close() }
	notices, err := repair(abs)
	for _, n := range notices {
		if opts.Notify != nil {
			opts.Notify(n)
		} else {
			logger.Warn(n)
		}
	}
	if err != nil {
		unlock()
		return nil, err
	}
	// FerretDB requires the URL to end with a slash; it stores one
	// <db>.sqlite file per database in that directory.
	// synchronous(off): SQLite never waits for an fsync. A commit survives
	// the process being killed (the tests kill it), not the machine losing
	// power, which may also corrupt the file: a sandbox is not production
	// storage. FerretDB commits every document it writes on its own, and
	// with fsyncs each auto-checkpoint of a long backfill cost two of them
	// (20k users, client path: 52-66 s with synchronous(normal), 33 s
	// without).
	sqliteURL := (&url.URL{Scheme: "file", Opaque: filepath.ToSlash(abs) + "/", RawQuery: "_pragma=synchronous(off)"}).String()

	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	// Clients connect to our proxy on addr; FerretDB listens on a port of
	// its own that only the proxy uses.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		unlock()
		if temp {
			_ = os.RemoveAll(abs)
		}
		return nil, fmt.Errorf("sandbox: listen on %s: %w", addr, err)
	}
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: "127.0.0.1:0"},
		Handler:   "sqlite",
		SQLiteURL: sqliteURL,
		Logger:    logger,
	})
	if err != nil {
		_ = ln.Close()
		unlock()
		if temp {
			_ = os.RemoveAll(abs)
		}
		return nil, fmt.Errorf("sandbox: start embedded server in %q: %w", abs, err)
	}
	backend, err := url.Parse(f.MongoDBURI())
	if err != nil {
		_ = ln.Close()
		unlock()
		return nil, fmt.Errorf("sandbox: embedded server address %q: %w", f.MongoDBURI(), err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	t := newTuner(abs, logger)
	s := &Server{
		uri:    (&url.URL{Scheme: "mongodb", Host: ln.Addr().String(), Path: "/"}).String(),
		dir:    abs,
		cancel: cancel,
		done:   make(chan error, 1),
		tuner:  t,
	}
	// Databases that exist already are tuned before any client connects.
	if err := t.pass(true); err != nil {
		logger.Warn("sandbox: tune existing databases", slog.Any("error", err))
	}
	go t.run()
	s.proxy = newProxy(ln, backend.Host, t, s)
	go func() {
		err := f.Run(ctx)
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		unlock()
		if temp {
			if rerr := os.RemoveAll(abs); rerr != nil && err == nil {
				err = fmt.Errorf("sandbox: remove temporary directory: %w", rerr)
			}
		}
		s.done <- err
	}()
	return s, nil
}

// storage returns the absolute storage directory, created if missing (a
// new temporary one when dir is empty; temp then says so).
func storage(dir string) (abs string, temp bool, err error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "mongomig-sandbox-")
		if err != nil {
			return "", false, fmt.Errorf("sandbox: temporary directory: %w", err)
		}
		dir, temp = d, true
	}
	abs, err = filepath.Abs(dir)
	if err != nil {
		return "", false, fmt.Errorf("sandbox: directory %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", false, fmt.Errorf("sandbox: create directory %q: %w", abs, err)
	}
	return abs, temp, nil
}

// URI is the connection string of the server, for example
// "mongodb://127.0.0.1:40123/".
func (s *Server) URI() string { return s.uri }

// Dir is the absolute storage directory (a temporary one when none was given).
func (s *Server) Dir() string { return s.dir }

// Stop shuts the server down and waits for it to finish, at most until ctx
// is done. Disconnect clients first: the server waits for open connections.
func (s *Server) Stop(ctx context.Context) error {
	s.once.Do(func() {
		s.proxy.close() // closing client connections lets FerretDB stop at once
		s.tuner.close()
	})
	s.cancel()
	select {
	case err := <-s.done:
		s.done <- nil // make a second Stop return at once
		return err
	case <-ctx.Done():
		return fmt.Errorf("sandbox: stop: %w", ctx.Err())
	}
}

// Sync indexes, now, every collection that exists (see docs/sandbox.md);
// the server otherwise does it within a few tens of milliseconds of a
// collection's creation. Tests that measure per-write costs call it after
// creating their collections.
func (s *Server) Sync() error { return s.tuner.pass(true) }

// StopTimeout is how long callers without a deadline of their own should let
// [Server.Stop] wait.
const StopTimeout = 10 * time.Second
