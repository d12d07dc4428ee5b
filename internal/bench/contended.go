package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/strategy"
)

// Workload is a contended run: Workers goroutines each run Sections
// critical sections of Hold (time.Sleep) on one shared key.
type Workload struct {
	Workers  int           `json:"workers"`
	Sections int           `json:"sections"` // per worker
	Hold     time.Duration `json:"hold_ns"`
}

// DefaultWorkload is the contended workload lockcompare reports: 8 workers,
// 25 sections each, 1 ms per section.
func DefaultWorkload() Workload {
	return Workload{Workers: 8, Sections: 25, Hold: time.Millisecond}
}

// Contention is the outcome of a contended run. Every time is measured in
// this process on one monotonic clock.
type Contention struct {
	Workload Workload      `json:"workload"`
	Lockers  int           `json:"lockers"`  // 1: one Locker shared; Workers: one each
	Sections int           `json:"sections"` // critical sections completed, all workers
	Wall     time.Duration `json:"wall_ns"`  // first Lock call to last Unlock return
	Held     time.Duration `json:"held_ns"`  // sum of critical-section times
	// Utilisation is Held / Wall: the share of the time the lock did
	// useful work. Above 1 only when holders overlapped.
	Utilisation float64 `json:"utilisation"`
	// Wait is from calling Lock to holding the lock.
	Wait Quantiles `json:"wait"`
	// Handoff is from one holder calling Unlock to the next holder's Lock
	// returning, over consecutive holders that did not overlap.
	Handoff Quantiles `json:"handoff"`
	// Overlaps counts consecutive holders whose critical sections
	// intersected: a broken mutual exclusion.
	Overlaps int `json:"overlaps"`
	// Waits and Handoffs are the durations Wait and Handoff summarise,
	// sorted, so that runs can be pooled before taking a percentile (a
	// mean of runs' p99s is not a p99). Not in the JSON report.
	Waits    []time.Duration `json:"-"`
	Handoffs []time.Duration `json:"-"`
}

// section is one critical section: t0 Lock called, t1 Lock returned (held),
// t2 Unlock called, t3 Unlock returned.
type section struct{ t0, t1, t2, t3 time.Time }

// Contended runs w against locker, shared by all the workers, on one fresh
// key and reports utilisation, the wait for the lock and the hand-off
// between holders. A critical section is measured from Lock returning to
// Unlock being called. The first error (a Lock that gives up when ctx ends,
// an Unlock that finds the lock lost) ends the run and is returned. A
// Workload with Workers or Sections below 1 or a negative Hold gives an
// error wrapping strategy.ErrInvalidConfig that names the field.
//
// Workers sharing one Locker behave like goroutines of one process; see
// ContendedApart for workers that behave like separate processes.
func Contended(ctx context.Context, locker strategy.Locker, w Workload) (Contention, error) {
	if err := w.check(); err != nil {
		return Contention{}, err
	}
	if locker == nil {
		return Contention{}, errorf("%w: locker is nil", strategy.ErrInvalidConfig)
	}
	lockers := make([]strategy.Locker, w.Workers)
	for i := range lockers {
		lockers[i] = locker
	}
	c, err := contend(ctx, lockers, w)
	c.Lockers = 1
	return c, err
}

// ContendedApart is Contended with a Locker of its own for each worker
// (worker i uses lockers[i]), as when separate processes contend: no
// worker learns of a release from inside its own Locker. len(lockers) must
// be w.Workers and none may be nil, else the error wraps
// strategy.ErrInvalidConfig.
func ContendedApart(ctx context.Context, lockers []strategy.Locker, w Workload) (Contention, error) {
	if err := w.check(); err != nil {
		return Contention{}, err
	}
	if len(lockers) != w.Workers || slices.Contains(lockers, nil) {
		return Contention{}, errorf("%w: lockers: got %d (nil ones included), want Workload.Workers = %d non-nil",
			strategy.ErrInvalidConfig, len(lockers), w.Workers)
	}
	c, err := contend(ctx, lockers, w)
	c.Lockers = len(lockers)
	return c, err
}

// contend runs worker i with lockers[i] on one fresh key.
func contend(ctx context.Context, lockers []strategy.Locker, w Workload) (Contention, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	key := "lockzoo-bench:" + runID() + ":contended"
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		sections []section
		errs     []error
	)
	start := make(chan struct{})
	// Each goroutine ends after its sections, at its first error, or when
	// ctx ends (Lock gives up then).
	for _, locker := range lockers {
		wg.Go(func() {
			<-start
			mine, err := work(ctx, locker, key, w)
			mu.Lock()
			defer mu.Unlock()
			sections = append(sections, mine...)
			if err != nil {
				errs = append(errs, err)
				cancel()
			}
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Contention{}, errorf("contended: %w", err)
	}
	return summarize(w, sections), nil
}

// work runs one worker's sections and returns them as measured.
func work(ctx context.Context, locker strategy.Locker, key string, w Workload) ([]section, error) {
	out := make([]section, 0, w.Sections)
	for range w.Sections {
		var s section
		s.t0 = time.Now()
		lease, err := locker.Lock(ctx, key)
		if err != nil {
			return out, fmt.Errorf("Lock(%q): %w", key, err)
		}
		s.t1 = time.Now()
		time.Sleep(w.Hold)
		s.t2 = time.Now()
		err = lease.Unlock(ctx)
		s.t3 = time.Now()
		if err != nil {
			return out, fmt.Errorf("Unlock(%q): %w", key, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// summarize turns the sections into a Contention.
func summarize(w Workload, sections []section) Contention {
	c := Contention{Workload: w, Sections: len(sections)}
	if len(sections) == 0 {
		return c
	}
	slices.SortFunc(sections, func(a, b section) int { return a.t1.Compare(b.t1) })
	first, last := sections[0].t0, sections[0].t3
	waits := make([]time.Duration, 0, len(sections))
	var handoffs []time.Duration
	for i, s := range sections {
		if s.t0.Before(first) {
			first = s.t0
		}
		if s.t3.After(last) {
			last = s.t3
		}
		c.Held += s.t2.Sub(s.t1)
		waits = append(waits, s.t1.Sub(s.t0))
		if i == 0 {
			continue
		}
		prev := sections[i-1]
		if s.t1.Before(prev.t2) {
			c.Overlaps++
			continue
		}
		handoffs = append(handoffs, s.t1.Sub(prev.t2))
	}
	c.Wall = last.Sub(first)
	if c.Wall > 0 {
		c.Utilisation = float64(c.Held) / float64(c.Wall)
	}
	c.Wait, c.Waits = quantiles(waits), waits
	c.Handoff, c.Handoffs = quantiles(handoffs), handoffs
	return c
}

// check validates a Workload.
func (w Workload) check() error {
	switch {
	case w.Workers < 1:
		return errorf("%w: Workload.Workers = %d, want at least 1", strategy.ErrInvalidConfig, w.Workers)
	case w.Sections < 1:
		return errorf("%w: Workload.Sections = %d, want at least 1", strategy.ErrInvalidConfig, w.Sections)
	case w.Hold < 0:
		return errorf("%w: Workload.Hold = %v, want 0 or more", strategy.ErrInvalidConfig, w.Hold)
	}
	return nil
}

// CrowdWorkload is the many-contenders workload lockcompare reports for n
// contenders, each with a Locker of its own (ContendedApart): 1 ms
// sections, at least 4 per contender and 256 in all, so that the wait
// quantiles come from several turns of the whole crowd.
func CrowdWorkload(n int) Workload {
	return Workload{Workers: n, Sections: max(4, 256/max(n, 1)), Hold: time.Millisecond}
}
