// Package stamp is the expiry timestamp that getset_timestamp and its
// stepping stone method 2 store in a lock key: decimal Unix milliseconds
// of the client's clock (articles 004 and 003).
//
//	import "github.com/lockzoo/lockzoo/internal/stamp"
package stamp

import (
	"fmt"
	"strconv"
	"time"
)

// Stamp is an expiry time in Unix milliseconds, as stored in the lock key.
type Stamp int64

// ExpiryAt returns the expiry time of a lock of length ttl taken at now,
// and the lock's validity counted from now. The expiry is truncated to the
// millisecond, so the validity is at most ttl.
func ExpiryAt(now time.Time, ttl time.Duration) (Stamp, time.Duration) {
	exp := now.UnixMilli() + max(ttl.Milliseconds(), 1)
	return Stamp(exp), time.UnixMilli(exp).Sub(now)
}

// String formats s as the value stored in Redis: decimal Unix milliseconds.
func (s Stamp) String() string { return strconv.FormatInt(int64(s), 10) }

// Passed reports whether s lies before now, the articles' `now > stored`.
func (s Stamp) Passed(now time.Time) bool { return int64(s) < now.UnixMilli() }

// Parse reads a stored value: a non-negative decimal integer of Unix
// milliseconds. ok is false for anything else.
func Parse(v string) (s Stamp, ok bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return Stamp(n), true
}

// maxShown bounds how much of a foreign value an error message quotes.
const maxShown = 64

// NotTimestamp builds the error for a key that holds value, which is not a
// timestamp: it wraps sentinel (the technique's ErrNotTimestamp) and names
// the key and the value.
func NotTimestamp(sentinel error, key, value string) error {
	if len(value) > maxShown {
		value = value[:maxShown] + "..."
	}
	return fmt.Errorf("%w: key %q holds %q", sentinel, key, value)
}
