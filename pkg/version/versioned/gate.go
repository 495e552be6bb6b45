package versioned

// The write-back gate: during a rolling deploy, a write-back stamps a
// document with a version the pods still running the previous release do
// not know, and they answer it with a *version.TooNewError. A gate holds
// the write-backs (Sync and Deferred alike) while it is closed; the
// upgraded document is still served, and the stored one stays as it was
// (counted in Stats.Held). pkg/release's *Announcement is the gate that
// opens once no live release knows only versions older than the
// collection's current one.

// Gate says whether a write-back of a document of coll to version may be
// sent now. It is asked on every upgrade that would be written back, so
// it must answer from memory, without a round trip.
type Gate interface {
	WriteBackOpen(coll string, version int64) bool
}

// WithWriteBackGate holds the write-backs of the policy chosen with
// [WithWriteBack] or [WithDeferred] while g is closed: for instance
// versioned.WithWriteBackGate(announcement), with the application's
// *release.Announcement, writes back once every older release is gone.
func WithWriteBackGate(g Gate) Option { return func(c *Collection) { c.gate = g } }

// held reports whether the gate holds the write-back of an upgrade.
func (c *Collection) held() bool {
	if c.gate == nil || c.gate.WriteBackOpen(c.name, c.current) {
		return false
	}
	c.stats.held.Add(1)
	return true
}
