package strategytest

import (
	"fmt"
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

// overlaps returns every pair of two holders' intervals that intersect
// (overlapsOf, which the Timeline's overlaps come from too).
func (tl *timeline) overlaps() []overlap {
	tl.mu.Lock()
	held := make([]Interval, 0, len(tl.spans))
	for _, s := range tl.spans {
		held = append(held, Interval{Client: s.who, From: s.from, To: s.to})
	}
	tl.mu.Unlock()
	var out []overlap
	for _, o := range overlapsOf(held) {
		out = append(out, overlap{a: o.A, b: o.B, both: o.To - o.From})
	}
	return out
}

// describe renders the first overlap for an account line.
func (o overlap) describe(key string) string {
	return fmt.Sprintf("%s and %s held %s together for %v", o.a, o.b, key, o.both.Round(time.Millisecond))
}
