// Package bench measures lock techniques against real Redis: uncontended
// throughput of Lock+Unlock pairs, round trips per acquire and release,
// contended hand-off on one key, and the raw SET NX PX + EVALSHA ceiling
// that no single-node technique can beat. cmd/lockcompare prints what it
// measures; package benchmarks may reuse it.
//
//	import "github.com/lockzoo/lockzoo/internal/bench"
//
// Every measurement keeps each duration it observed, on the monotonic clock
// of the one process that runs all the clients, and reports percentiles of
// them (nearest rank, see Percentile); nothing is sampled or estimated.
//
//   - Uncontended: workers goroutines, each on its own key, loop Lock+Unlock
//     for a fixed time. Ops/s is pairs completed over wall time; the
//     latency percentiles are of one pair.
//   - Raw: the same loop with bare commands, SET key token NX PX then the
//     compare-and-delete script by EVALSHA (internal/scripts), one
//     connection borrow per command as the techniques do: the ceiling.
//   - RoundTrips: sequential pairs through Counting pools; the round trips
//     of Lock and of Unlock, the most any one node saw per pair.
//   - Contended: a Workload of workers that each run sections critical
//     sections of a fixed hold time on one shared key. Utilisation is the
//     time spent inside critical sections over wall time; wait is from
//     calling Lock to holding; hand-off is from one holder calling Unlock
//     to the next holder's Lock returning.
//
// Keys carry a random run id, so runs on a shared server do not collide.
package bench
