// Package peers makes the Redis lock libraries users would pick instead of
// lockzoo into strategy.Lockers, so that lockzoo's suite (strategytest) and
// its comparison (internal/compare) can put them in the same tables as
// lockzoo's techniques, on the same nodes, in the same run:
//
//   - Redsync: github.com/go-redsync/redsync/v4 over redigo pools, on one
//     node or on N independent nodes (Redlock);
//
//   - Redislock: github.com/bsm/redislock over github.com/redis/go-redis/v9;
//
//   - Rueidislock: github.com/redis/rueidis/rueidislock with KeyMajority 1.
//
//     import "github.com/lockzoo/lockzoo/peers"
//
// The adapters are thin: each lock, retry and release is the peer's own
// code; an adapter only maps the peer's results onto the strategy.Lease
// contract and the peer's errors onto lockzoo's sentinels where the meaning
// really matches (ErrNotAcquired for "someone else holds it", ErrNotHeld for
// "it was no longer ours", ErrUnsupported, ErrInvalidConfig). Anything else
// comes back wrapped, as the peer returned it.
//
// Each adapter's Properties claims what that library's own documentation
// promises, no more and no less; the comment on each Properties method
// cites the words. The suite then checks the claims black-box: lockzoo's
// fault points are not in a peer's code, so a scenario can show a property
// holding but may miss a violation, and an unclaimed property's verdict is
// shown, not judged.
//
// What every adapter shares:
//
//   - Keys: the lock key is Config.Prefix + key for redsync and redislock;
//     rueidislock builds its own "<KeyPrefix>:<i>:<key>", and gets Prefix
//     without a trailing ':' as KeyPrefix, so its keys start with Prefix too.
//   - Tokens: each peer writes its own random value; Config.Token and
//     Config.Clock are not used (no peer takes a token source or a clock).
//   - Retry: Lock follows the peer's own retry schedule (redsync: 50-250 ms
//     random delays; redislock: DefaultRedislockRetry, a linear 10 ms;
//     rueidislock: its client-side-caching notices) until ctx ends. A
//     Config.Retry replaces the schedule with TryLock attempts spaced as it
//     says, and stops where it says.
//   - Fence is 0: no peer issues fencing tokens.
//   - Close ends what the adapter built (clients, connections); later calls
//     return an error wrapping ErrClosed.
package peers
