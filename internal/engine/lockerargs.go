package engine

import "time"

// LockerArgs is what every attempt of one Locker passes to its scripts,
// its TTL in ms and its name, boxed once (Set), so that the fast path
// does not box them anew on every call. The zero value boxes every time.
type LockerArgs struct {
	ttl    time.Duration
	ttlMs  any // ttl in ms
	locker string
	id     any // locker
}

// Set records the Locker's TTL and name, boxed. Call it before the
// Locker's first attempt: the args are read without a lock.
func (b *LockerArgs) Set(ttl time.Duration, locker string) {
	b.ttl, b.ttlMs, b.locker, b.id = ttl, ttl.Milliseconds(), locker, locker
}

// Name returns the Locker's name, as Set recorded it.
func (b *LockerArgs) Name() string { return b.locker }

// Locker returns the Locker name locker as an argument: the boxed one
// when it is the name Set recorded.
func (b *LockerArgs) Locker(locker string) any {
	if locker == b.locker && b.id != nil {
		return b.id
	}
	return locker
}

// TTL returns ttl in ms as an argument: the boxed one when it is the TTL
// Set recorded.
func (b *LockerArgs) TTL(ttl time.Duration) any {
	if ttl == b.ttl && b.ttlMs != nil {
		return b.ttlMs
	}
	return ttl.Milliseconds()
}
