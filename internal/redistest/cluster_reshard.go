package redistest

import (
	"fmt"
	"slices"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Resharding settings, as `redis-cli --cluster reshard` uses them.
const (
	// migrateBatch is how many keys one CLUSTER GETKEYSINSLOT and MIGRATE
	// move at a time.
	migrateBatch = 100
	// migrateTimeout is MIGRATE's own timeout for the exchange with the
	// target; the call to the source waits a little longer.
	migrateTimeout = 5 * time.Second
	// moveTimeout bounds the wait for every node to agree on a slot's new
	// master after CLUSTER SETSLOT NODE.
	moveTimeout = 10 * time.Second
)

// SlotMove is one slot on its way from its master (Source) to another
// (Target), begun by StartMove and completed by Finish. Between the two the
// slot is migrating on the source and importing on the target: the source
// serves the commands on the keys it still holds and answers ASK for the
// others, and the target serves a command on the slot only after ASKING
// (else it answers MOVED to the source). Its methods report failures with
// t.Fatalf on the TB given to StartCluster.
type SlotMove struct {
	c              *Cluster
	slot           int
	source, target *Node
	finished       bool
}

// StartMove begins moving slot from the master that serves it to target, a
// master of the cluster: CLUSTER SETSLOT slot IMPORTING on the target, then
// MIGRATING on the source, as `redis-cli --cluster reshard` does. No key
// moves yet: MigrateKeys moves some, Finish moves the rest and hands the
// slot over. It calls t.Fatalf when slot is out of range, target is not a
// master or already serves slot, or a node refuses.
func (c *Cluster) StartMove(slot int, target *Node) *SlotMove {
	c.t.Helper()
	to := slices.Index(c.masters, target)
	if to < 0 {
		c.t.Fatalf("redistest: StartMove: target %s is not one of the masters %v", nodeAddr(target), addrs(c.masters))
	}
	source := c.NodeForSlot(slot)
	if source == target {
		c.t.Fatalf("redistest: StartMove: slot %d is served by %s already", slot, target.Addr())
	}
	m := &SlotMove{c: c, slot: slot, source: source, target: target}
	m.setSlot(target, "IMPORTING", c.ids[source])
	m.setSlot(source, "MIGRATING", c.ids[target])
	return m
}

// Slot returns the slot being moved.
func (m *SlotMove) Slot() int { return m.slot }

// Source returns the master the slot moves from.
func (m *SlotMove) Source() *Node { return m.source }

// Target returns the master the slot moves to.
func (m *SlotMove) Target() *Node { return m.target }

// MigrateKeys moves keys, all of the move's slot, from the source to the
// target with MIGRATE ... KEYS; a key the source does not hold is left
// alone. After it the source answers ASK for them. It calls t.Fatalf when a
// key is of another slot, the move is finished, or MIGRATE fails (the
// target holding one of the keys already, say).
func (m *SlotMove) MigrateKeys(keys ...string) {
	m.c.t.Helper()
	if m.finished {
		m.c.t.Fatalf("redistest: MigrateKeys: the move of slot %d is finished", m.slot)
	}
	for _, k := range keys {
		if s := m.c.Slot(k); s != m.slot {
			m.c.t.Fatalf("redistest: MigrateKeys: key %q is of slot %d, not of slot %d being moved", k, s, m.slot)
		}
	}
	for batch := range slices.Chunk(keys, migrateBatch) {
		m.migrate(batch)
	}
}

// MigrateSome moves up to n of the keys the source still holds in the
// slot (CLUSTER GETKEYSINSLOT, then MIGRATE) and returns them, none when
// the source holds no more. It calls t.Fatalf as MigrateKeys does.
func (m *SlotMove) MigrateSome(n int) []string {
	m.c.t.Helper()
	if m.finished {
		m.c.t.Fatalf("redistest: MigrateSome: the move of slot %d is finished", m.slot)
	}
	var moved []string
	for len(moved) < n {
		keys := m.keysLeft(min(n-len(moved), migrateBatch))
		if len(keys) == 0 {
			break
		}
		m.migrate(keys)
		moved = append(moved, keys...)
	}
	return moved
}

// Finish moves every key the source still holds in the slot, batch by
// batch until CLUSTER GETKEYSINSLOT finds none (clients may add keys
// meanwhile), then assigns the slot to the target with CLUSTER SETSLOT
// slot NODE on every live master, target first, then source, then the
// others, and returns once every live node serves the slot from the
// target in its view. NodeFor and NodeForSlot name the target from then
// on. Finishing a finished move does nothing. It calls t.Fatalf when a
// command fails or the nodes do not agree within moveTimeout.
func (m *SlotMove) Finish() {
	m.c.t.Helper()
	if m.finished {
		return
	}
	m.finish()
	if err := m.c.waitSettled(moveTimeout); err != nil {
		m.c.t.Fatalf("redistest: move slot %d from %s to %s: %v", m.slot, m.source.Addr(), m.target.Addr(), err)
	}
}

// finish moves the keys left and hands the slot over, without waiting for
// the other nodes to learn it.
func (m *SlotMove) finish() {
	m.c.t.Helper()
	for {
		keys := m.keysLeft(migrateBatch)
		if len(keys) == 0 {
			break
		}
		m.migrate(keys)
	}
	id := m.c.ids[m.target]
	m.setSlot(m.target, "NODE", id)
	m.setSlot(m.source, "NODE", id)
	for _, n := range m.c.masters {
		if n != m.target && n != m.source && alive(n) {
			m.setSlot(n, "NODE", id)
		}
	}
	m.c.mu.Lock()
	m.c.owner[m.slot] = slices.Index(m.c.masters, m.target)
	m.c.mu.Unlock()
	m.finished = true
}

// keysLeft returns up to n keys the source holds in the slot.
func (m *SlotMove) keysLeft(n int) []string {
	m.c.t.Helper()
	keys, err := redis.Strings(m.source.Do("CLUSTER", "GETKEYSINSLOT", m.slot, n))
	if err != nil {
		m.c.t.Fatalf("redistest: CLUSTER GETKEYSINSLOT %d %d on %s: %v", m.slot, n, m.source.Addr(), err)
	}
	return keys
}

// migrate moves keys from the source to the target with one MIGRATE.
func (m *SlotMove) migrate(keys []string) {
	m.c.t.Helper()
	host, port := m.target.srv.peer()
	args := []any{host, port, "", 0, migrateTimeout.Milliseconds(), "KEYS"}
	for _, k := range keys {
		args = append(args, k)
	}
	reply, err := redis.String(doTimed(migrateTimeout+doTimeout, m.source.Addr(), "MIGRATE", args...))
	if err != nil || (reply != "OK" && reply != "NOKEY") {
		m.c.t.Fatalf("redistest: MIGRATE %d key(s) of slot %d from %s to %s = %q, %v; want OK",
			len(keys), m.slot, m.source.Addr(), m.target.Addr(), reply, err)
	}
}

// setSlot sends CLUSTER SETSLOT slot state id to n.
func (m *SlotMove) setSlot(n *Node, state, id string) {
	m.c.t.Helper()
	if _, err := n.Do("CLUSTER", "SETSLOT", m.slot, state, id); err != nil {
		m.c.t.Fatalf("redistest: CLUSTER SETSLOT %d %s %s on %s: %v", m.slot, state, id, n.Addr(), err)
	}
}

// MoveSlots moves each slot from the master that serves it to target, one
// slot at a time, as `redis-cli --cluster reshard` does (StartMove, then
// Finish): clients may keep running meanwhile, and are answered ASK or
// MOVED as the slot goes. It returns once every live node agrees on the
// new map. A slot target serves already is left alone. It calls t.Fatalf
// as StartMove and Finish do.
func (c *Cluster) MoveSlots(target *Node, slots ...int) {
	c.t.Helper()
	moved := false
	for _, s := range slots {
		if c.NodeForSlot(s) == target {
			continue
		}
		c.StartMove(s, target).finish()
		moved = true
	}
	if !moved {
		return
	}
	if err := c.waitSettled(moveTimeout); err != nil {
		c.t.Fatalf("redistest: MoveSlots %v to %s: %v", slots, target.Addr(), err)
	}
}

// MoveKeys moves the slots of keys to target with MoveSlots: with each key,
// every other key of its slot moves too. Keys of one slot move it once. It
// calls t.Fatalf as MoveSlots does.
func (c *Cluster) MoveKeys(target *Node, keys ...string) {
	c.t.Helper()
	slots := make([]int, 0, len(keys))
	for _, k := range keys {
		if s := c.Slot(k); !slices.Contains(slots, s) {
			slots = append(slots, s)
		}
	}
	c.MoveSlots(target, slots...)
}

// String describes the move, for messages.
func (m *SlotMove) String() string {
	return fmt.Sprintf("slot %d from %s to %s", m.slot, m.source.Addr(), m.target.Addr())
}
