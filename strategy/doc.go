// Package strategy defines the contract every lockzoo locking technique
// implements: a Locker that hands out Leases on Redis keys, the Config that
// shapes it, the Properties it claims, the retry policies Lock waits with and
// the sentinel errors callers match with errors.Is.
//
//	import "github.com/lockzoo/lockzoo/strategy"
//
// A technique lives in its own package (for example lua_release or redlock)
// and returns a *Locker that satisfies [Locker]. Code that depends only on
// this package can switch techniques by changing one import line.
//
// Config.Observer hears every call's events (acquired, not acquired,
// released, extended, lost, handed off) from every technique; see
// [Observer], and package strategy/slogobserver for one that logs them.
//
// Every method that talks to Redis takes a context.Context as its first
// parameter, and the context bounds the Redis call itself, not only the wait
// for a connection: when a Redis node freezes, the call returns shortly after
// the context's deadline with an error that matches ctx.Err().
//
// This package imports nothing else from the lockzoo module.
package strategy
