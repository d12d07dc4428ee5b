// Package slogobserver is a strategy.Observer that writes every lock event
// to a log/slog Logger, so that a service sees its locks in its logs by
// setting one Config field.
//
//	import "github.com/lockzoo/lockzoo/strategy/slogobserver"
//
// Use it with any technique:
//
//	l, err := luarelease.New(pool, strategy.Config{Observer: slogobserver.New(logger)})
//
// Each event is one record, with the message "lock acquired", "lock not
// acquired", "lock released", "lock extended", "lock lost" or "lock handed
// off", and the event's fields as attributes (technique, op, key, token,
// fence, wait, attempts, held, reason, err, ...). The levels, which Levels
// can change, are:
//
//   - Debug: acquired, released, extended, handed off: the normal life of
//     a lock, too frequent for a production log;
//   - Info: not acquired because the lock was taken (a TryLock refused, a
//     Lock whose Retry policy stopped) or the Locker was closed;
//   - Warn: a Lock that gave up because its ctx ended; an Unlock or Extend
//     that came after the lease's Deadline (the holder worked without the
//     guarantee that it alone held the lock);
//   - Error: not acquired because Redis was unreachable; a lock lost, found
//     no longer ours by Unlock or Extend: another client may have held it
//     at the same time.
//
// Records are written synchronously, on the goroutine of the lock call, as
// every Observer is called; a record whose level the Logger does not
// enable costs one Enabled check and nothing else. The package imports
// only package strategy from the lockzoo module.
//
// Weaknesses: a log is no metric. To count or time locks, write your own
// Observer (docs/observe.md's histogram example is one), or use both: an
// Observer can call several.
package slogobserver
