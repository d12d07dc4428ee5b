// Package strategytest is lockzoo's race-condition and conformance suite:
// scenarios that run any strategy.Locker against real Redis and report, as
// data, which guarantees it kept and which it broke.
//
//	import "github.com/lockzoo/lockzoo/strategy/strategytest"
//
// There is a scenario for each field of strategy.Properties, plus crash
// liveness and exclusion on a faulty network:
//
//   - mutual-exclusion: workers contend for one key and update a counter in
//     Redis inside the lock; every critical section is recorded on one
//     monotonic clock and an interval-overlap checker and a lost-update
//     counter look for two holders at once. It stops no client at a fault
//     point, so it is black-box everywhere: an unclaimed MutualExclusion
//     is reported here, not judged.
//   - expired-takeover: a holder dies and its lock expires (its stored time
//     passes; where it never expires, another client's DEL frees it); two
//     waiters then take it over, stopped at the technique's takeover point
//     where it has one, each having seen the lock expired, and let go one
//     after the other (article 004's p2 and p3); elsewhere both try at
//     once. Both holding the lock breaks MutualExclusion.
//   - crash-liveness: a holder dies without unlocking; a waiter must get the
//     lock once the TTL passes. Every technique claims it but one whose
//     lock never expires (getset_timestamp/method1), on which the waiter
//     gives up after three TTLs.
//   - atomic-acquire: a client dies between its acquire steps; the lock must
//     still expire.
//   - owner-safe-release: a releasing client is stopped, its lock expires
//     (or, where it never expires, another client's DEL frees it) and
//     another client takes it; the stale release must leave the new
//     holder's lock alone.
//   - clock-skew: clients whose clocks disagree (and, for multi-node
//     techniques, a Redis node whose clock jumps) must not both hold.
//   - node-fault: a primary dies before its replica received the lock and
//     the replica is promoted (multi-node techniques: a minority of nodes is
//     lost); a second client must not get the lock. A Locker that waits
//     for its replicas (Target.Replicas) is refused while the replica is
//     cut off (strategy.ErrNotReplicated), and locks again, acknowledged,
//     before the primary dies.
//   - fencing: a holder paused past its TTL writes to a resource that checks
//     fencing tokens (package fencing); its stale write must be refused.
//   - faulty-network: 4 Lockers × 2 workers contend for 3 keys while the
//     network to the lock node (a minority of the nodes, for a multi-node
//     technique) adds latency, cuts connections and swallows replies, on a
//     seeded schedule (internal/chaos); an overlap, a lost update, a
//     Deadline outside [Lock call start, return + TTL] or, where Fencing is
//     claimed, a fence not above the key's last is a violation. Exclusion
//     is claimed here by techniques whose release is owner-safe (a release
//     whose reply was lost is retried). The faults are the network's, so
//     the run is black-box on every technique: an unclaimed property's
//     result is reported, not judged.
//   - sentinel-failover: 4 Lockers × 2 workers, each Locker over a
//     sentinel.Pool of its own, contend for 3 keys on a primary with one
//     replica more than they wait for, under 3 Sentinels; the replicas
//     lag (frozen, links cut), the primary is killed for good and the
//     Sentinels promote a replica. Sections begun while the replicas
//     lagged (and the first key's just before) hold their lock through
//     the failover. Two sections of a key at once and lost updates of a
//     counter on a separate healthy node are violations; Result.Failover
//     gives the times to the promotion and to a free key's Lock, which
//     must come within Failover.ResumeBound. It runs on targets with
//     Target.SentinelFailover only, black-box.
//
// Races are narrow windows. For lockzoo's own techniques the scenarios stop
// clients at the technique's named fault points (internal/fault), so each
// race happens on every run; a third-party Locker gets the black-box form of
// each scenario, which can show a property holding but may miss a violation.
//
// Run runs the scenarios as subtests and fails a test where a claimed
// property is violated, or where one of lockzoo's techniques does not claim
// a property and the scenario fails to reproduce the violation. Evaluate
// returns the same Results as data; cmd/lockcompare prints them.
//
// Each Result carries a Timeline of what the scenario's clients did, on the
// scenario's monotonic clock: every Locker and Lease call with what it
// returned, every Redis command their connections carried with its reply
// (the suite wraps the pools it builds the Locker over and attributes a
// connection to the client named in the context it was taken with), the
// fault points where a client was stopped or crashed, what the scenario did
// to the nodes, each lease's TTL running out, and the interval each client
// believed it held the lock, with the overlaps. lockcompare draws it as a
// sequence diagram and prints it with -trace.
package strategytest
