package cli

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
)

// cancelOn is stderr that cancels the run once it shows marker, as a
// SIGTERM arriving at that moment would.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (w *cancelOn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.marker) {
		w.cancel()
	}
	return len(p), nil
}

// TestInterruptedUpSaysInterrupted: an up stopped by a signal after its
// first migration says what it applied before the interruption, not
// "before the failure" (issue 26), and exits 130.
func TestInterruptedUpSaysInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errw := &cancelOn{marker: "applied 0001_create_users.yaml in", cancel: cancel}
	var out bytes.Buffer
	code := Run(ctx, []string{"--embedded", t.TempDir() + "/s", "--dir", "../../migrations", "up"},
		Streams{In: strings.NewReader(""), Out: &out, Err: errw}, Config{Embedded: startTestSandbox})
	stderr := errw.buf.String()
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want 130\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "applied before the interruption: 0001_create_users.yaml") || strings.Contains(stderr, "failure") {
		t.Errorf("stderr:\n%s", stderr)
	}
}
