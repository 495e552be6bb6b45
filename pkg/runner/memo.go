package runner

import "sync"

// memo is a server answer probed the first time it is needed, then kept
// (one given by an option is kept from the start). It is what keeps a
// *Runner safe for concurrent use while it probes lazily: one probe at a
// time, the others wait for its answer; a failed probe is tried again by
// the next caller.
type memo[T any] struct {
	mu sync.Mutex
	v  *T
}

func newMemo[T any](given *T) *memo[T] { return &memo[T]{v: given} }

func (m *memo[T]) get(probe func() (*T, error)) (*T, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.v == nil {
		v, err := probe()
		if err != nil {
			return nil, err
		}
		m.v = v
	}
	return m.v, nil
}
