// Package chaos runs Lockers against Redis nodes behind faulty TCP proxies
// and checks, from outside the Locker, that every lease it grants is right:
// the one home of lockzoo's chaos logic, used by the chaos test (TestChaos,
// `make chaos`) and by the race-condition suite's faulty-network scenarios
// (strategy/strategytest).
//
//	import "github.com/lockzoo/lockzoo/internal/chaos"
//
// Run starts Config.Lockers Lockers, as that many processes would run, each
// with Config.Workers goroutines that contend for Config.Keys. Each
// critical section reads a per-key counter on a separate, healthy node and
// writes it back plus one. Meanwhile every faulty node's proxy follows its
// own seeded fault schedule: the fault changes every 50-250 ms among added
// latency (5, 30, 120 or 400 ms each way), every connection cut, and
// replies swallowed while requests still run (all of them for the phase, or
// just the next one). At the end the proxies heal, the workers stop, and
// each key is locked once more to measure how long a free key stays
// unlockable.
//
// The checks, counted in the Report:
//   - overlapping holders: a section entered while another holder of the
//     same key is inside its own;
//   - lost updates: each key's counter against the sections completed on it;
//   - fences not strictly increasing per key, in the order the sections ran;
//   - bad Deadlines: a lease's Deadline before the start of the Lock call
//     that returned it, or after its return plus the TTL;
//   - time to lockable after healing, per key, and keys not lockable at all.
//
// The schedule is a function of Config.Seed alone (math/rand/v2's PCG), so
// a run is replayed by its seed: the faults come in the same order with the
// same lengths, and every worker picks the same keys. Timing on a loaded
// machine still differs between runs, so a replay reproduces the conditions,
// not every interleaving.
package chaos
