package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

// Options configure [Start].
type Options struct {
	// Dir is the directory the server stores its SQLite files in; it is
	// created if missing and data persists across runs. Empty means an
	// in-memory server whose data disappears on Stop.
	Dir string

	// Logger receives the server's own log records. Nil discards them.
	Logger *slog.Logger
}

// Server is a running embedded server. Stop it with [Server.Stop].
type Server struct {
	uri    string
	dir    string
	cancel context.CancelFunc
	done   chan error
}

// Start starts a server listening on a free loopback TCP port. It returns once
// the server accepts connections.
func Start(opts Options) (*Server, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	// In memory unless a directory is given.
	sqliteURL := "file:./?mode=memory"
	dir := ""
	if opts.Dir != "" {
		abs, err := filepath.Abs(opts.Dir)
		if err != nil {
			return nil, fmt.Errorf("sandbox: directory %q: %w", opts.Dir, err)
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, fmt.Errorf("sandbox: create directory %q: %w", abs, err)
		}
		dir = abs
		// FerretDB requires the URL to end with a slash; it stores one
		// <db>.sqlite file per database in that directory.
		sqliteURL = (&url.URL{Scheme: "file", Opaque: filepath.ToSlash(abs) + "/"}).String()
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: "127.0.0.1:0"},
		Handler:   "sqlite",
		SQLiteURL: sqliteURL,
		Logger:    logger,
	})
	if err != nil {
		return nil, fmt.Errorf("sandbox: start embedded server in %q: %w", dir, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{uri: f.MongoDBURI(), dir: dir, cancel: cancel, done: make(chan error, 1)}
	go func() {
		err := f.Run(ctx)
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}

// URI is the connection string of the server, for example
// "mongodb://127.0.0.1:40123/".
func (s *Server) URI() string { return s.uri }

// Dir is the absolute storage directory, or "" for an in-memory server.
func (s *Server) Dir() string { return s.dir }

// Stop shuts the server down and waits for it to finish, at most until ctx
// is done. Disconnect clients first: the server waits for open connections.
func (s *Server) Stop(ctx context.Context) error {
	s.cancel()
	select {
	case err := <-s.done:
		s.done <- nil // make a second Stop return at once
		return err
	case <-ctx.Done():
		return fmt.Errorf("sandbox: stop: %w", ctx.Err())
	}
}

// StopTimeout is how long callers without a deadline of their own should let
// [Server.Stop] wait.
const StopTimeout = 10 * time.Second
