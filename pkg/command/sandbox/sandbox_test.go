package sandbox_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/mongomig/mongomig/pkg/command"
	"github.com/mongomig/mongomig/pkg/command/sandbox"
)

// TestServeAndInUse: Serve listens where it is told and a second server
// on the same directory is refused as command.ErrEmbeddedInUse (exit 4).
func TestServeAndInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	ctx := context.Background()
	uri, stop, err := sandbox.Serve(ctx, dir, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stop(ctx)
	if uri != "mongodb://"+addr+"/" {
		t.Errorf("uri = %q, want mongodb://%s/", uri, addr)
	}
	_, _, err = sandbox.Embedded(ctx, dir)
	if !errors.Is(err, command.ErrEmbeddedInUse) || !strings.Contains(err.Error(), "mongomig-sandbox.lock") {
		t.Errorf("a second server on %s: %v, want ErrEmbeddedInUse", dir, err)
	}
	p := sandbox.With(command.Program{})
	if p.Embedded == nil || p.Serve == nil {
		t.Error("With left Embedded or Serve nil")
	}
}
