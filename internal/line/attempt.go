package line

import (
	"strconv"
	"strings"
	"time"

	"github.com/lockzoo/lockzoo/internal/protocol"
)

// Attempt is one acquire attempt, for a technique to make (engine.Attempt).
type Attempt struct {
	Key   string        // the Redis key, prefix included
	Token string        // the owner token, new for every attempt (SetTry, SetPass)
	TTL   time.Duration // the lock lifetime asked for
	// Waiter names the Lock call the attempt belongs to, the same for all
	// its attempts: a technique that keeps a line of waiters in Redis
	// queues it under this name, and release notices name it. It is
	// unique per call whatever Config.Token returns (Config.Token's value
	// + "." + random characters, or a UUIDv4). A TryLock's Token is its
	// Waiter.
	Waiter string
	// Try is the attempt's number in its Lock call, from 1 (SetTry); 0
	// for a TryLock's attempt and for a local hand-off's.
	Try uint64
	// Pass numbers, from 1, the attempts a local Unlock made for the
	// waiter (SetPass: a hand-off, see HandOffer); 0 for any other.
	Pass uint64
	// Waits is true for Lock's attempts and false for TryLock's: only
	// callers that will wait join a line.
	Waits bool
	// Arrived is when the Lock (or TryLock) call began, the same for all
	// its attempts: a technique may order its line of waiters by it.
	Arrived time.Time
	// Locker names the Locker that makes the attempt, for a technique
	// that sends notices to the waiter's inbox, protocol.Inbox(Key,
	// Locker); "" otherwise.
	Locker string
}

// SetTry makes a the Lock call's attempt number try, with its token
// (token, which SetPass writes with too).
func (a *Attempt) SetTry(try uint64) { a.Try, a.Pass, a.Token = try, 0, token(a.Waiter, "", try) }

// TokenNamesWaiter reports whether a's Token names its Waiter as the
// acquire scripts read it back when the name is not sent: the token's
// part before its last "." (SetTry and SetPass write "<waiter>.<n>" and
// "<waiter>.p<n>"; a waiter's name may hold dots, a number none).
func (a *Attempt) TokenNamesWaiter() bool { return a.Waiter != "" && (a.Try > 0 || a.Pass > 0) }

// token is the owner token of attempt n of the Lock call named waiter:
// waiter + "." + kind + n.
func token(waiter, kind string, n uint64) string {
	return waiter + "." + kind + strconv.FormatUint(n, 10)
}

// parseToken reads back what SetTry or SetPass wrote: the attempt number
// (try) or hand-off number (pass) of the Lock call named waiter, or ok
// false for any other token.
func parseToken(tok, waiter string) (try, pass uint64, ok bool) {
	rest, found := strings.CutPrefix(tok, waiter+".")
	if !found || waiter == "" {
		return 0, 0, false
	}
	digits, isPass := strings.CutPrefix(rest, "p")
	n, err := strconv.ParseUint(digits, 10, 64)
	switch {
	case err != nil || n == 0 || strconv.FormatUint(n, 10) != digits:
		return 0, 0, false
	case isPass:
		return 0, n, true
	}
	return n, 0, true
}

// Held identifies a lock a lease holds, for Release and Extend.
type Held struct {
	Key   string // the Redis key, prefix included
	Value string // the value the holder wrote (the token, for most techniques)
	Fence uint64
	// Keys is engine.Acquired.Keys of the acquire that took the lock, or
	// nil (a lock handed off, or taken back): the technique then builds
	// its keys from Key.
	Keys []any
}

// Channel is where Release publishes its notice: protocol.Channel(Key).
func (h Held) Channel() string { return protocol.Channel(h.Key) }
