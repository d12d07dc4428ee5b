// Package engine is the machinery every lockzoo technique shares: config
// checking, owner tokens, the TryLock/Lock retry loop, lease bookkeeping
// (deadline, extend, single release) and bounded Redis calls.
//
//	import "github.com/lockzoo/lockzoo/internal/engine"
//
// A technique implements Technique (its Redis commands and nothing else)
// and wraps an engine.Locker built by New. The engine:
//
//  1. checks the key, draws an owner token (Config.Token or a UUIDv4) and
//     notes the monotonic time;
//  2. asks the technique to acquire, once for TryLock, or in a loop paced by
//     Config.Retry for Lock, which retries transient Redis failures and stops
//     when ctx ends;
//  3. returns a Lease whose Deadline is the start time plus the validity the
//     technique granted, and which releases at most once.
package engine
