package method2

import (
	"fmt"
	"strconv"
	"time"
)

// stamp is an expiry time in Unix milliseconds, as stored in the lock key:
// the format of getset_timestamp, which method 2 leads to.
type stamp int64

// expiryAt returns the expiry time of a lock of length ttl taken at now,
// and the lock's validity counted from now (at most ttl: the expiry is
// truncated to the millisecond).
func expiryAt(now time.Time, ttl time.Duration) (stamp, time.Duration) {
	exp := now.UnixMilli() + max(ttl.Milliseconds(), 1)
	return stamp(exp), time.UnixMilli(exp).Sub(now)
}

// String formats s as the value stored in Redis: decimal Unix milliseconds.
func (s stamp) String() string { return strconv.FormatInt(int64(s), 10) }

// passed reports whether s lies before now, the article's "now > stored".
func (s stamp) passed(now time.Time) bool { return int64(s) < now.UnixMilli() }

// parseStamp reads a stored value: a non-negative decimal integer of Unix
// milliseconds. ok is false for anything else.
func parseStamp(v string) (s stamp, ok bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return stamp(n), true
}

// maxShown bounds how much of a foreign value an error message quotes.
const maxShown = 64

// notTimestamp builds the error for a key that holds value, which is not a
// timestamp. It wraps ErrNotTimestamp and names the key and the value.
func notTimestamp(key, value string) error {
	if len(value) > maxShown {
		value = value[:maxShown] + "..."
	}
	return fmt.Errorf("%w: key %q holds %q", ErrNotTimestamp, key, value)
}
