package cli

import (
	"fmt"
	"math"
	"time"

	"github.com/urfave/cli/v2"
)

// maxLockLease caps --lock-lease: a crashed process's lock blocks every
// up, down and backfill until its lease expires, and a lease past the
// largest time the server stores (2562047h was accepted) never expires.
const maxLockLease = 24 * time.Hour

// maxFileName is the longest file name (in bytes) the common file systems
// accept (NAME_MAX on Linux and macOS).
const maxFileName = 255

// checkFlagLimits refuses (exit 2), for every command, a --lock-lease
// above maxLockLease and a number flag given NaN or an infinity (strconv
// parses "NaN" and "Inf", and every comparison with NaN is false, so
// `backfill --rate NaN` and `analyze --size-warn NaN` passed the range
// checks).
func checkFlagLimits(c *cli.Context) error {
	if hasFlag(c, "lock-lease") && c.Duration("lock-lease") > maxLockLease {
		return usageError(fmt.Errorf("--lock-lease %v: give at most %v (a crashed process's lock blocks every deploy until its lease expires; the holder renews it every quarter of it), such as 30s",
			c.Duration("lock-lease"), maxLockLease))
	}
	for _, f := range c.Command.Flags {
		ff, ok := f.(*cli.Float64Flag)
		if !ok || !c.IsSet(ff.Name) {
			continue
		}
		if v := c.Float64(ff.Name); math.IsNaN(v) || math.IsInf(v, 0) {
			return usageError(fmt.Errorf("--%s %v: give a finite number (`mongomig %s --help` says what --%s means)", ff.Name, v, c.Command.Name, ff.Name))
		}
	}
	return nil
}

// fileNameFits refuses (exit 2) a migration name whose file name would be
// longer than a file system allows: creating it failed with "file name too
// long", exit 1.
func fileNameFits(file, name string) error {
	if len(file) <= maxFileName {
		return nil
	}
	most := len(name) - (len(file) - maxFileName)
	return usageError(fmt.Errorf("migration name is %d characters long: the file name %s... would be %d bytes, more than the %d a file system allows; shorten the name to at most %d characters",
		len(name), file[:40], len(file), maxFileName, most))
}
