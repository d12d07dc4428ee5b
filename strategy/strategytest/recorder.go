package strategytest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/strategy"
)

// clientKey carries, in a context, the name of the scenario client making
// the calls: the recorder attributes a call, a command or a fault point to
// the client named in the context it was made with, and records nothing
// for a context that names none (the scenario's own setup).
type clientKey struct{}

// as returns ctx naming client who.
func as(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, clientKey{}, who)
}

// clientOf returns the client ctx names, "" for none.
func clientOf(ctx context.Context) string {
	who, _ := ctx.Value(clientKey{}).(string)
	return who
}

// recorder collects one scenario's Timeline. It is safe for concurrent use:
// mutual-exclusion's workers and redlock's node calls record at once.
type recorder struct {
	mu sync.Mutex
	// base is the scenario's start; every At is time.Since(base), read
	// under mu so that events are appended in the order of their At.
	base time.Time
	// neverExpires: the technique's keys have no expiry, so a lease that
	// runs out leaves its key in place.
	neverExpires bool
	events       []Event
	dropped      int
	leases       []*leaseRecord
}

// leaseRecord is one lease a client was granted.
type leaseRecord struct {
	who      string
	lease    strategy.Lease
	from     time.Duration
	ttl      time.Duration
	skew     time.Duration  // the client's clock minus the real one
	unlocked *time.Duration // when its first Unlock call began
	released *time.Duration // when its first Unlock call returned
}

// recordCap bounds what a recorder keeps before the timeline is folded
// and cut to MaxEvents.
const recordCap = 20000

func newRecorder() *recorder { return &recorder{base: time.Now()} }

// start forgets everything recorded so far and restarts the clock.
func (rec *recorder) start(neverExpires bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.base, rec.neverExpires = time.Now(), neverExpires
	rec.events, rec.dropped, rec.leases = nil, 0, nil
}

// add appends e, stamped now, and returns its index (-1 when the timeline
// is full and e was dropped) and its time.
func (rec *recorder) add(e Event) (int, time.Duration) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	e.At = time.Since(rec.base)
	if len(rec.events) >= recordCap {
		rec.dropped++
		return -1, e.At
	}
	rec.events = append(rec.events, e)
	return len(rec.events) - 1, e.At
}

// replied records the reply to command i, then folds it into the event
// before it when that is the same command with the same reply from the same
// client and nothing was recorded since: a polling Lock's hundreds of
// identical attempts take one line.
func (rec *recorder) replied(i int, result string, took time.Duration) {
	if i < 0 {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	e := &rec.events[i]
	e.Result, e.Took = result, took
	if i == 0 || i != len(rec.events)-1 {
		return
	}
	prev := &rec.events[i-1]
	if prev.Kind == EventCommand && prev.Client == e.Client && prev.Node == e.Node && prev.Op == e.Op && prev.Args == e.Args && prev.Result == e.Result {
		prev.Repeats++
		prev.Until = e.At
		rec.events = rec.events[:i]
	}
}

// call records that the client ctx names called op(args) and returns the
// func that records its return with the outcome; it returns the return's
// time. With no client in ctx, nothing is recorded.
func (rec *recorder) call(ctx context.Context, op, args string) (returned func(outcome string) time.Duration) {
	who := clientOf(ctx)
	if who == "" {
		return func(string) time.Duration { return 0 }
	}
	start := time.Now()
	rec.add(Event{Kind: EventCall, Client: who, Op: op, Args: args})
	return func(outcome string) time.Duration {
		_, at := rec.add(Event{Kind: EventReturn, Client: who, Op: op, Result: outcome, Took: time.Since(start)})
		return at
	}
}

// note records something the scenario did, on who's lane ("" for Redis's).
func (rec *recorder) note(who, format string, a ...any) {
	rec.add(Event{Kind: EventNote, Client: who, Op: fmt.Sprintf(format, a...)})
}

// fault records that the client ctx names reached point, and what
// happened there.
func (rec *recorder) fault(ctx context.Context, point, what string) {
	if who := clientOf(ctx); who != "" {
		rec.add(Event{Kind: EventFault, Client: who, Op: point, Result: what})
	}
}

// crash is fault.Crash(point) that records the crash.
func (rec *recorder) crash(point string) fault.Hook {
	crash := fault.Crash(point)
	return func(ctx context.Context, p string) error {
		err := crash(ctx, p)
		if err != nil {
			rec.fault(ctx, p, "crashed")
		}
		return err
	}
}

// acquired records that who was granted lease at at, with the Locker's
// ttl and clock skew, and returns its record for released.
func (rec *recorder) acquired(who string, lease strategy.Lease, at, ttl, skew time.Duration) *leaseRecord {
	lr := &leaseRecord{who: who, lease: lease, from: at, ttl: ttl, skew: skew}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.leases = append(rec.leases, lr)
	return lr
}

// releasing records that lr's holder began to Unlock it: from then on it no
// longer believes it holds the lock.
func (rec *recorder) releasing(lr *leaseRecord) { rec.stamp(&lr.unlocked) }

// released records that lr's Unlock returned: its key, if still there, is
// no longer the holder's concern, so its expiry is not drawn.
func (rec *recorder) released(lr *leaseRecord) { rec.stamp(&lr.released) }

// stamp sets *at to now the first time.
func (rec *recorder) stamp(at **time.Duration) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if *at == nil {
		now := time.Since(rec.base)
		*at = &now
	}
}

// timeline returns what was recorded, the scenario ending now: the events,
// each lease's held interval and its expiry when its TTL ran out before its
// holder let go, and the overlaps of the intervals.
func (rec *recorder) timeline() *Timeline {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	end := time.Since(rec.base)
	tl := &Timeline{Events: slices.Clone(rec.events), Dropped: rec.dropped, End: end}
	for _, lr := range rec.leases {
		// A technique may compute Deadline on the holder's clock (then
		// the real time it stands for is skew earlier) or on the real
		// one: take whichever reading lies nearer the acquire plus its TTL.
		deadline := lr.lease.Deadline().Sub(rec.base)
		if skewed := deadline - lr.skew; lr.skew != 0 && absDur(skewed-lr.from-lr.ttl) < absDur(deadline-lr.from-lr.ttl) {
			deadline = skewed
		}
		iv := Interval{Client: lr.who, From: lr.from, To: min(deadline, end)}
		if lr.unlocked != nil && *lr.unlocked < iv.To {
			iv.To = *lr.unlocked
		}
		iv.Open = lr.unlocked == nil && deadline > end
		iv.To = max(iv.To, iv.From)
		if deadline <= end && (lr.released == nil || *lr.released > deadline) {
			what := "Redis expires its key about now"
			if rec.neverExpires {
				what = "the key has no expiry and stays in Redis"
			}
			tl.Events = append(tl.Events, Event{At: deadline, Kind: EventExpiry, Client: lr.who, Op: "TTL " + lr.ttl.String(), Result: what})
		}
		tl.Held = append(tl.Held, iv)
	}
	slices.SortStableFunc(tl.Events, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	tl.Events = foldWaits(tl.Events)
	if len(tl.Events) > MaxEvents {
		tl.Dropped += len(tl.Events) - MaxEvents
		tl.Events = tl.Events[:MaxEvents]
	}
	tl.Overlaps = overlapsOf(tl.Held)
	for _, e := range tl.Events {
		if e.Client != "" && !slices.Contains(tl.Clients, e.Client) {
			tl.Clients = append(tl.Clients, e.Client)
		}
	}
	return tl
}

// overlapsOf returns every intersection of two clients' intervals,
// sweeping them in order of start.
func overlapsOf(held []Interval) []Overlap {
	ivs := slices.Clone(held)
	slices.SortStableFunc(ivs, func(a, b Interval) int { return cmp.Compare(a.From, b.From) })
	var out []Overlap
	for i, a := range ivs {
		for _, b := range ivs[i+1:] {
			if b.From >= a.To {
				break
			}
			if a.Client != b.Client {
				out = append(out, Overlap{A: a.Client, B: b.Client, From: b.From, To: min(a.To, b.To)})
			}
		}
	}
	return out
}

// keepEnds is how many commands of a call foldWaits keeps at each end.
const keepEnds = 3

// foldWaits shortens each call that sent many commands (a Lock polling a
// held lock): it keeps the call's first and last keepEnds commands and
// puts, in place of the others, one note on the client's lane saying how
// many commands of which kinds were sent over how long.
func foldWaits(events []Event) []Event {
	drop := make([]bool, len(events))
	notes := map[int]Event{}   // by the index of the first command folded
	open := map[string][]int{} // a client's commands in its current call
	inCall := map[string]bool{}
	for i, e := range events {
		switch e.Kind {
		case EventCall:
			inCall[e.Client], open[e.Client] = true, nil
		case EventCommand:
			if inCall[e.Client] {
				open[e.Client] = append(open[e.Client], i)
			}
		case EventReturn:
			cmds := open[e.Client]
			inCall[e.Client], open[e.Client] = false, nil
			if len(cmds) <= 2*keepEnds+1 {
				continue
			}
			middle := cmds[keepEnds : len(cmds)-keepEnds]
			sent, kinds := 0, map[string]int{}
			var order []string
			for _, j := range middle {
				drop[j] = true
				n := 1 + events[j].Repeats
				sent += n
				if kinds[events[j].Op] == 0 {
					order = append(order, events[j].Op)
				}
				kinds[events[j].Op] += n
			}
			var parts []string
			for _, op := range order {
				parts = append(parts, fmt.Sprintf("%s x%d", op, kinds[op]))
			}
			first, last := events[middle[0]], events[middle[len(middle)-1]]
			span := max(last.At, last.Until) - first.At
			notes[middle[0]] = Event{At: first.At, Kind: EventNote, Client: e.Client,
				Op: fmt.Sprintf("%s sent %d more commands over %s, not drawn one by one: %s", e.Client, sent, roundTook(span), strings.Join(parts, ", "))}
		}
	}
	out := make([]Event, 0, len(events))
	for i, e := range events {
		if n, ok := notes[i]; ok {
			out = append(out, n)
		}
		if !drop[i] {
			out = append(out, e)
		}
	}
	return out
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
