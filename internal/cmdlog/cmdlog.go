// Package cmdlog records the command documents a client sends, through
// the driver's command monitoring, so that tests pin exactly what mongomig
// sends to a server.
package cmdlog

import (
	"context"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
)

// Recorder keeps the command documents a client sends.
type Recorder struct {
	mu   sync.Mutex
	cmds []bson.Raw
}

// Monitor is the command monitor to give the client's options.
func (r *Recorder) Monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.cmds = append(r.cmds, append(bson.Raw(nil), e.Command...))
	}}
}

// Named returns the commands whose first key is name.
func (r *Recorder) Named(name string) []bson.Raw {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []bson.Raw
	for _, c := range r.cmds {
		if elems, err := c.Elements(); err == nil && len(elems) > 0 && elems[0].Key() == name {
			out = append(out, c)
		}
	}
	return out
}

// All returns every command recorded, in order.
func (r *Recorder) All() []bson.Raw {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bson.Raw(nil), r.cmds...)
}

// Reset forgets the commands recorded so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmds = nil
}
