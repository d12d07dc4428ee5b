package strategy

import (
	"math/rand/v2"
	"time"
)

// Retry decides how long Lock waits between attempts. Implementations must
// be safe for concurrent use; the policies in this package are stateless.
type Retry interface {
	// Backoff returns the wait before retry number attempt (1 for the wait
	// after the first failed attempt) and true, or false when Lock should
	// stop retrying.
	Backoff(attempt int) (time.Duration, bool)
}

// Default retry bounds. A waiter polls no less often than every
// DefaultRetryMax, so a released lock reaches a waiter within about 4 ms
// plus one round trip.
const (
	DefaultRetryMin = 250 * time.Microsecond
	DefaultRetryMax = 4 * time.Millisecond
)

// DefaultRetry returns the policy Lock uses when Config.Retry is nil:
// Exponential(DefaultRetryMin, DefaultRetryMax), that is jittered waits that
// start near 250 µs and stop growing at 4 ms.
func DefaultRetry() Retry { return Exponential(DefaultRetryMin, DefaultRetryMax) }

// NoRetry returns a policy under which Lock makes exactly one attempt, like
// TryLock.
func NoRetry() Retry { return noRetry{} }

type noRetry struct{}

func (noRetry) Backoff(int) (time.Duration, bool) { return 0, false }

// Fixed returns a policy that waits d between attempts, forever. A d below
// zero is treated as zero.
func Fixed(d time.Duration) Retry { return fixed(max(d, 0)) }

type fixed time.Duration

func (f fixed) Backoff(int) (time.Duration, bool) { return time.Duration(f), true }

// Exponential returns a policy whose wait doubles from lo with each attempt
// up to hi, forever. Each wait is jittered uniformly within [w/2, w] so that
// waiters that failed together do not retry together. Bounds below zero are
// treated as zero and hi below lo is treated as lo.
func Exponential(lo, hi time.Duration) Retry {
	lo = max(lo, 0)
	return exponential{lo: lo, hi: max(hi, lo)}
}

type exponential struct{ lo, hi time.Duration }

func (e exponential) Backoff(attempt int) (time.Duration, bool) {
	w := e.lo
	for i := 1; i < attempt && w < e.hi; i++ {
		w *= 2
	}
	w = min(w, e.hi)
	if w <= 1 {
		return w, true
	}
	half := w / 2
	return half + rand.N(w-half+1), true
}
