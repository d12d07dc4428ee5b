package strategytest

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// timeline records who held a lock when, on one monotonic clock shared by
// every client of a scenario, and finds the intervals where two holders
// overlapped. Timing luck cannot fool it: an overlap is reported only for
// intervals that really intersected on that clock.
type timeline struct {
	base  time.Time
	mu    sync.Mutex
	spans []span
}

type span struct {
	who      string
	from, to time.Duration
}

// overlap is two holders inside the lock at once.
type overlap struct {
	a, b string
	both time.Duration
}

func newTimeline() *timeline { return &timeline{base: time.Now()} }

// enter marks who entering the critical section; the returned func marks
// the exit.
func (tl *timeline) enter(who string) (exit func()) {
	from := time.Since(tl.base)
	return func() { tl.add(span{who: who, from: from, to: time.Since(tl.base)}) }
}

// hold records that who believed it held the lock from from to to (its
// lease's Deadline, for a holder that never let go).
func (tl *timeline) hold(who string, from, to time.Time) {
	if to.Before(from) {
		to = from
	}
	tl.add(span{who: who, from: from.Sub(tl.base), to: to.Sub(tl.base)})
}

func (tl *timeline) add(s span) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.spans = append(tl.spans, s)
}

// overlaps returns every pair of intervals that intersect, sweeping the
// intervals in order of entry.
func (tl *timeline) overlaps() []overlap {
	tl.mu.Lock()
	spans := slices.Clone(tl.spans)
	tl.mu.Unlock()
	slices.SortFunc(spans, func(x, y span) int { return int(x.from - y.from) })
	var out []overlap
	for i, s := range spans {
		for _, later := range spans[i+1:] {
			if later.from >= s.to {
				break
			}
			out = append(out, overlap{a: s.who, b: later.who, both: min(s.to, later.to) - later.from})
		}
	}
	return out
}

// describe renders the first overlap for an account line.
func (o overlap) describe(key string) string {
	return fmt.Sprintf("%s and %s held %s together for %v", o.a, o.b, key, o.both.Round(time.Millisecond))
}
