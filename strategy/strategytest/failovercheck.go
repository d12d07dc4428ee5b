package strategytest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gomodule/redigo/redis"
)

// judge counts the overlapping sections and the lost counter updates into
// r.
func (f *failoverRun) judge(ctx context.Context, r *Result) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ov, first := keyOverlaps(f.sections)
	lost, done := 0, 0
	for _, key := range failoverKeys {
		n, err := redis.Int(f.counterDo(ctx, "GET", f.e.prefix+"failover-counter:"+key))
		if err != nil && !errors.Is(err, redis.ErrNil) {
			fail(r, "read counter", err)
			return
		}
		lost += max(f.completed[key]-n, n-f.completed[key])
		done += f.completed[key]
	}
	r.Attempts = done
	r.Violations = ov + lost
	r.Account = fmt.Sprintf("%d sections (%d held through the failover), %d overlaps, %d updates lost; %d Locks failed (%d not replicated)",
		done, f.longs.Load(), ov, lost, f.failed.Load(), f.notReplicated.Load())
	if first != "" {
		r.Account += "; first: " + first
	}
}

// keyOverlaps counts the sections that began, on their key, before an
// earlier section on that key ended, and describes the first.
func keyOverlaps(sections []heldKey) (int, string) {
	sorted := slices.Clone(sections)
	slices.SortFunc(sorted, func(a, b heldKey) int { return a.from.Compare(b.from) })
	n, first := 0, ""
	last := map[string]heldKey{} // the section of each key that ends last so far
	for _, s := range sorted {
		if p, ok := last[s.key]; ok && s.from.Before(p.to) {
			n++
			if first == "" {
				first = fmt.Sprintf("%s and %s held %s together for %v", p.who, s.who, s.key, earliest(p.to, s.to).Sub(s.from).Round(time.Millisecond))
			}
		}
		if p, ok := last[s.key]; !ok || s.to.After(p.to) {
			last[s.key] = s
		}
	}
	return n, first
}

// counterDo sends one command to the healthy counter node, bounded by
// counterBound.
func (f *failoverRun) counterDo(ctx context.Context, cmd string, args ...any) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, counterBound)
	defer cancel()
	c, err := f.counter.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return redis.DoContext(c, ctx, cmd, args...)
}

// sleepCtx sleeps for d or until ctx ends; it reports whether ctx is still
// live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// earliest returns the earlier of a and b.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func drainErrs(errs <-chan error) []error {
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}
