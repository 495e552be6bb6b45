package release

// pause makes the heartbeat wait before its next renewal until resume
// (tests: a process paused past its TTL).
func (a *Announcement) pause() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.paused == nil {
		a.paused = make(chan struct{})
	}
}

func (a *Announcement) resume() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.paused != nil {
		close(a.paused)
		a.paused = nil
	}
}

func (a *Announcement) waitPaused() {
	a.mu.Lock()
	p := a.paused
	a.mu.Unlock()
	if p != nil {
		select {
		case <-p:
		case <-a.stop:
		}
	}
}
