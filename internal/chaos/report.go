package chaos

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// LockableBound is the longest a free key may stay unlockable once the
// faults have healed: issue 28's acceptance bound.
const LockableBound = time.Second

// Report is what a run observed. The safety counts (Overlaps, Lost,
// FenceRegressions, BadDeadlines) are zero on a correct technique; the
// others describe the run.
type Report struct {
	Seed     int64
	Duration time.Duration // of the faults
	Faults   []Fault       // the kinds the schedules drew from; nil with no proxy
	// Phases counts the fault phases applied, by name ("latency 400ms",
	// "cut", "swallow", "swallow one"), over every faulty node.
	Phases map[string]int
	// Swallowed is how many whole replies the proxies discarded.
	Swallowed int64

	Sections      int // critical sections completed (counter written)
	FailedLocks   int // Lock calls that ended in an error before the run's end
	FailedUnlocks int // leases whose Unlock still failed after retries
	NotHeld       int // Unlock calls that answered ErrNotHeld
	Expired       int // leases whose Deadline had passed when Lock returned

	Overlaps         int // sections entered while another holder of the key was inside
	Lost             int // counter updates lost (or counted twice), summed over keys
	FenceRegressions int // fences not above the previous section's on the key
	BadDeadlines     int // Deadlines outside [Lock call start, return + TTL]

	// Lockable is, per key, how long after the workers stopped (the faults
	// healed) one Lock took to get it; MaxLockable is the largest.
	Lockable    map[string]time.Duration
	MaxLockable time.Duration
	// Unlockable counts keys that could not be locked at all after healing.
	Unlockable int

	// Examples describe the first violations in words.
	Examples []string
}

// Violations returns the count of safety violations: overlaps, lost
// updates, fence regressions and bad Deadlines.
func (r Report) Violations() int {
	return r.Overlaps + r.Lost + r.FenceRegressions + r.BadDeadlines
}

// Stuck reports whether some key stayed unlockable longer than
// LockableBound after healing.
func (r Report) Stuck() bool { return r.Unlockable > 0 || r.MaxLockable > LockableBound }

// String renders the counts on one line, seed first, so that a log line is
// enough to replay the run.
func (r Report) String() string {
	return fmt.Sprintf("seed %d, %v of faults %s: %d sections, %d failed Locks, %d failed Unlocks, %d ErrNotHeld, %d expired on return; "+
		"overlaps %d, lost %d, fences not increasing %d, bad Deadlines %d; max time to lockable after healing %v (%d keys never); "+
		"%d replies swallowed; phases %s",
		r.Seed, r.Duration, faultNames(r.Faults), r.Sections, r.FailedLocks, r.FailedUnlocks, r.NotHeld, r.Expired,
		r.Overlaps, r.Lost, r.FenceRegressions, r.BadDeadlines, r.MaxLockable.Round(time.Millisecond), r.Unlockable,
		r.Swallowed, phaseText(r.Phases))
}

func faultNames(fs []Fault) string {
	if len(fs) == 0 {
		return "none"
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return strings.Join(names, "+")
}

func phaseText(phases map[string]int) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(phases)) {
		parts = append(parts, fmt.Sprintf("%s×%d", name, phases[name]))
	}
	return strings.Join(parts, " ")
}
