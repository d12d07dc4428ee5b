package notify_test

import (
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/internal/notify"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

// BenchmarkNoticeDelivery measures the floor under a hand-off between
// Lockers, which a notice carries (lua_release's and redlock's releases
// publish it): from a client sending PUBLISH until a Hub hands the notice
// to a goroutine that waits for it, one notice at a time with gap between
// them, as between the releases of 1 ms critical sections (time.Sleep, as
// package bench holds them), against a round trip (PING) sent the same
// way. It reports the p50 and p99 of each ("notice-p50-µs",
// "rtt-p50-µs", ...) and the utilisation that such sections could reach
// if a hand-off cost the notice's p50 and nothing else
// ("notice-bound-util-%", for Lockers apart), or one round trip
// ("rtt-bound-util-%", a hand-off inside one Locker): bench's contended
// figures cannot beat them on the same machine.
//
// Its sub-benchmarks are lua_release's one node and redlock's five nodes
// with a quorum of three: there the client sends the PUBLISH (or the
// PING) to every node, one write each, and a hand-off is done when the
// quorum's notices (or replies) have come, as redlock's waiter holds a
// lock once three nodes handed it theirs.
func BenchmarkNoticeDelivery(b *testing.B) {
	for _, tc := range []struct {
		name          string
		nodes, quorum int
	}{
		{"nodes=1", 1, 1},
		{"nodes=5/quorum=3", 5, 3},
	} {
		b.Run(tc.name, func(b *testing.B) { benchDelivery(b, tc.nodes, tc.quorum) })
	}
}

// benchDelivery is BenchmarkNoticeDelivery on n nodes with quorum q.
func benchDelivery(b *testing.B, n, q int) {
	b.Helper()
	const gap = time.Millisecond
	nodes := redistest.Start(b, n)
	pools := make([]strategy.Pool, n)
	for i, node := range nodes {
		pools[i] = node.Pool()
	}
	got := make(chan time.Time, n)
	hub := notify.NewHub(pools, func(_, _ string) { got <- time.Now() })
	defer hub.Close()
	select {
	case <-hub.Subscribe("bench"):
	case <-time.After(5 * time.Second):
		b.Fatal("subscription not confirmed within 5s")
	}
	redistest.WaitSubscribed(b, "bench", nodes...)
	fan := newFanOut(b, nodes)
	var notice, rtt, slept []time.Duration
	for b.Loop() {
		start := time.Now()
		time.Sleep(gap)
		slept = append(slept, time.Since(start))
		start = time.Now()
		fan.do(b, q, "PING")
		rtt = append(rtt, time.Since(start))
		fan.rest(b)
		time.Sleep(gap)
		start = time.Now()
		fan.send(b, "PUBLISH", "bench", "x")
		for i := range n {
			select {
			case at := <-got:
				if i == q-1 {
					notice = append(notice, at.Sub(start))
				}
			case <-time.After(5 * time.Second):
				b.Fatalf("notice %d of %d did not come within 5s", i+1, n)
			}
		}
		fan.rest(b)
	}
	hold := report(b, "slept", slept)
	bound := func(handOff time.Duration) float64 { return 100 * float64(hold) / float64(hold+handOff) }
	b.ReportMetric(bound(report(b, "notice", notice)), "notice-bound-util-%")
	b.ReportMetric(bound(report(b, "rtt", rtt)), "rtt-bound-util-%")
}

// fanOut sends one command to every node, a write each, and hands the
// replies, as they come, to the benchmark: one reader goroutine per
// node, on a connection of its own (not a pool's, which would keep it open
// when returned), which ends when the benchmark's cleanup closes it.
type fanOut struct {
	conns   []redis.Conn
	replies chan error // one per reply, in the order they come
	owed    int        // replies sent for and not yet taken
}

// newFanOut opens a connection to each of nodes and starts its reader.
func newFanOut(b *testing.B, nodes []*redistest.Node) *fanOut {
	b.Helper()
	f := &fanOut{replies: make(chan error, len(nodes))}
	for _, node := range nodes {
		c, err := redis.Dial("tcp", node.Addr(), redis.DialConnectTimeout(5*time.Second))
		if err != nil {
			b.Fatalf("dial %s: %v, want a connection", node.Addr(), err)
		}
		b.Cleanup(func() { c.Close() })
		f.conns = append(f.conns, c)
		go func() { // ends when c is closed: Receive fails
			for {
				_, err := c.Receive()
				if c.Err() != nil {
					return // closed, or failed: the benchmark's take reports a missing reply
				}
				f.replies <- err
			}
		}()
	}
	return f
}

// send writes cmd to every node without waiting for a reply.
func (f *fanOut) send(b *testing.B, cmd string, args ...any) {
	b.Helper()
	for i, c := range f.conns {
		err := c.Send(cmd, args...)
		if err == nil {
			err = c.Flush()
		}
		if err != nil {
			b.Fatalf("%s to node %d: %v, want it sent", cmd, i, err)
		}
	}
	f.owed += len(f.conns)
}

// do sends cmd to every node and returns once q replies came.
func (f *fanOut) do(b *testing.B, q int, cmd string, args ...any) {
	b.Helper()
	f.send(b, cmd, args...)
	f.take(b, q)
}

// rest takes the replies still owed.
func (f *fanOut) rest(b *testing.B) {
	b.Helper()
	f.take(b, f.owed)
}

// take waits for k replies; an error reply or a failed read fails b.
func (f *fanOut) take(b *testing.B, k int) {
	b.Helper()
	for range k {
		select {
		case err := <-f.replies:
			if err != nil {
				b.Fatalf("reply: %v, want none", err)
			}
			f.owed--
		case <-time.After(5 * time.Second):
			b.Fatal("a reply did not come within 5s")
		}
	}
}

// report reports the p50 and p99 of d as name-p50-µs and name-p99-µs and
// returns the p50.
func report(b *testing.B, name string, d []time.Duration) time.Duration {
	b.Helper()
	p50, p99 := bench.Percentile(d, 0.50), bench.Percentile(d, 0.99)
	b.ReportMetric(float64(p50.Microseconds()), name+"-p50-µs")
	b.ReportMetric(float64(p99.Microseconds()), name+"-p99-µs")
	return p50
}
