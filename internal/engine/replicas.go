package engine

import (
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/strategy"
)

// WithReplicas is for a technique that honours Config.Replicas,
// Config.ReplicaTimeout and Config.WaitAOF: each of its acquires, extends
// and hand-offs that took the lock waits, on the connection that wrote it,
// for the replicas' acknowledgement (WAIT), and a lock that was not
// acknowledged is taken back and reported with an error wrapping
// strategy.ErrNotReplicated. When the Config asks for such a wait the
// engine then:
//
//   - bounds each of Lock's attempts by AttemptTimeout plus
//     ReplicaTimeout, so the wait has its time;
//   - ends Lock at the first attempt that fails with
//     strategy.ErrNotReplicated (the replicas did not keep up: trying again
//     at once would only wait again), with an error wrapping
//     strategy.ErrNotAcquired too;
//   - does not take a lock handed to a waiter by a release in Redis (a
//     "handoff:" notice) as it is: the releaser did not wait for the
//     replicas (a release needs no wait). The waiter makes an attempt
//     instead, which finds the lock in its name and waits for the
//     replicas on its own connection (see replicated).
//
// Without WithReplicas, New refuses a Config that asks for a wait
// (strategy.ErrInvalidConfig), rather than grant leases that no replica
// acknowledged.
func WithReplicas() Option {
	return func(l *Locker) { l.honoursReplicas = true }
}

// checkReplicas refuses a Config that asks for the replicas'
// acknowledgement of a technique that does not wait for it.
func (l *Locker) checkReplicas() error {
	if l.honoursReplicas || (l.cfg.Replicas == 0 && !l.cfg.WaitAOF) {
		return nil
	}
	return fmt.Errorf("%w: Replicas %d, WaitAOF %v: %s does not wait for replicas (lua_release does); leave them zero",
		strategy.ErrInvalidConfig, l.cfg.Replicas, l.cfg.WaitAOF, l.props.Name)
}

// replicated reports whether the Config asks a technique that honours it
// (WithReplicas) to wait for the replicas.
func (l *Locker) replicated() bool {
	return l.honoursReplicas && (l.cfg.Replicas > 0 || l.cfg.WaitAOF)
}

// replicaWait is what each of Lock's attempts may spend waiting for the
// replicas, on top of AttemptTimeout: Config.ReplicaTimeout when waits are
// asked for, else 0.
func (l *Locker) replicaWait() time.Duration {
	if !l.replicated() {
		return 0
	}
	return l.cfg.ReplicaTimeout
}
