package strategytest

import (
	"fmt"
	"time"
)

// Timeline is what the clients of one scenario did, recorded as it happened
// on one monotonic clock that starts when the scenario does: enough to draw
// the scenario as a sequence diagram, a lane per client and one for Redis.
// lockcompare draws it in its HTML report and prints it with -trace.
//
// Everything in it was recorded during the run: the Locker and Lease calls
// of each client and what they returned, the Redis commands each client's
// connections carried with their replies, the fault points where a client
// was stopped or crashed, what the scenario itself did to the nodes, and,
// derived from the leases, when each lease's TTL ran out and the interval
// each client believed it held the lock.
type Timeline struct {
	// Clients names the client lanes, in order of first appearance. Redis
	// is not among them: events with an empty Client are Redis's.
	Clients []string `json:"clients"`
	// Events are in the order they happened (At, then recording order).
	Events []Event `json:"events"`
	// Held is, per lease a client was granted, the interval it believed it
	// held the lock: from the acquire's return to the first of its Unlock
	// call, its lease's deadline and the end of the scenario.
	Held []Interval `json:"held"`
	// Overlaps are the intersections of two clients' Held intervals.
	Overlaps []Overlap `json:"overlaps,omitempty"`
	// Dropped counts the events not kept once the timeline held
	// MaxEvents; the intervals are all kept.
	Dropped int `json:"dropped,omitempty"`
	// End is when the scenario ended.
	End time.Duration `json:"end_ns"`
}

// MaxEvents is how many events a Timeline keeps. A call that sent many
// commands (a Lock polling a held lock) keeps its first and last three and
// one note for the rest; a busier scenario (mutual-exclusion's 200
// critical sections) then keeps its first MaxEvents and counts the rest in
// Dropped.
const MaxEvents = 160

// EventKind says what an Event records.
type EventKind string

// The kinds of Event.
const (
	// EventCall: Client called Op (TryLock, Lock, Unlock, Extend, Write)
	// with Args.
	EventCall EventKind = "call"
	// EventReturn: Client's call Op returned Result, Took after its call.
	EventReturn EventKind = "return"
	// EventCommand: one Redis command, Op with Args, sent by Client to Node;
	// Result is the reply and Took the time until it came ("" and 0 for a
	// pipelined command whose reply was not seen).
	EventCommand EventKind = "command"
	// EventFault: Client reached fault point Op and Result says what
	// happened there: "stopped", "resumed" or "crashed".
	EventFault EventKind = "fault"
	// EventExpiry: the TTL of Client's lease ran out (its Deadline passed)
	// while it had not unlocked; Result says what that did to the key.
	EventExpiry EventKind = "expiry"
	// EventNote: something the scenario did that is not a client's call
	// (killing a node, promoting a replica, a clock jump, a client dying
	// with its lock); on Client's lane, or Redis's when Client is empty.
	EventNote EventKind = "note"
)

// Event is one thing that happened in a scenario.
type Event struct {
	At     time.Duration `json:"at_ns"`
	Kind   EventKind     `json:"kind"`
	Client string        `json:"client,omitempty"`
	// Node is the Redis node a command went to: "" when the technique has
	// one, else "node 1", "node 2", ..., or "replica".
	Node   string        `json:"node,omitempty"`
	Op     string        `json:"op"`
	Args   string        `json:"args,omitempty"`
	Result string        `json:"result,omitempty"`
	Took   time.Duration `json:"took_ns,omitempty"`
	// Repeats counts the further times a client sent the same command
	// and got the same reply straight after this one, with nothing else
	// recorded in between (a Lock polling a held lock), the last at Until.
	Repeats int           `json:"repeats,omitempty"`
	Until   time.Duration `json:"until_ns,omitempty"`
}

// Interval is a span of a scenario's clock during which Client believed it
// held the lock. Open says the belief outlived the scenario: the client
// never let go, and its lease's deadline lay beyond End.
type Interval struct {
	Client string        `json:"client"`
	From   time.Duration `json:"from_ns"`
	To     time.Duration `json:"to_ns"`
	Open   bool          `json:"open,omitempty"`
}

// Overlap is two clients believing, From to To, that each held the lock.
type Overlap struct {
	A    string        `json:"a"`
	B    string        `json:"b"`
	From time.Duration `json:"from_ns"`
	To   time.Duration `json:"to_ns"`
}

// Text renders e on one line without its time: "A: Lock(stale)",
// "A -> SET lock:stale 3f2a… NX PX 1000 <- OK", "A -> node 2: DEL
// lock:x <- 1", "A: stopped at fault point set_nx_ex/release:after-get".
func (e Event) Text() string {
	who := e.Client
	if who == "" {
		who = "Redis"
	}
	switch e.Kind {
	case EventCall:
		return fmt.Sprintf("%s: %s(%s)", who, e.Op, e.Args)
	case EventReturn:
		return fmt.Sprintf("%s: %s returned %s after %s", who, e.Op, e.Result, roundTook(e.Took))
	case EventCommand:
		node := ""
		if e.Node != "" {
			node = e.Node + ": "
		}
		cmd := e.Op
		if e.Args != "" {
			cmd += " " + e.Args
		}
		reply := e.Result
		if reply == "" {
			reply = "(reply not read)"
		}
		if e.Took >= 5*time.Millisecond {
			reply += " after " + roundTook(e.Took)
		}
		if e.Repeats > 0 {
			reply += fmt.Sprintf(", and %d times more over %s", e.Repeats, roundTook(e.Until-e.At))
		}
		return fmt.Sprintf("%s -> %s%s <- %s", who, node, cmd, reply)
	case EventFault:
		return fmt.Sprintf("%s: %s at fault point %s", who, e.Result, e.Op)
	case EventExpiry:
		return fmt.Sprintf("%s's lease ran out (%s): %s", e.Client, e.Op, e.Result)
	}
	return e.Op // a note names whom it is about
}

// roundTook renders a duration to a precision a reader can use.
func roundTook(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}
