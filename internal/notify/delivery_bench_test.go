package notify_test

import (
	"testing"
	"time"

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
func BenchmarkNoticeDelivery(b *testing.B) {
	const gap = time.Millisecond
	node := redistest.Start(b, 1)[0]
	got := make(chan time.Time, 1)
	hub := notify.NewHub([]strategy.Pool{node.Pool()}, func(_, _ string) { got <- time.Now() })
	defer hub.Close()
	select {
	case <-hub.Subscribe("bench"):
	case <-time.After(5 * time.Second):
		b.Fatal("subscription not confirmed within 5s")
	}
	c := node.Pool().Get()
	defer c.Close()
	var notice, rtt, slept []time.Duration
	for b.Loop() {
		start := time.Now()
		time.Sleep(gap)
		slept = append(slept, time.Since(start))
		start = time.Now()
		if _, err := c.Do("PING"); err != nil {
			b.Fatalf("PING = %v, want PONG", err)
		}
		rtt = append(rtt, time.Since(start))
		time.Sleep(gap)
		start = time.Now()
		if _, err := c.Do("PUBLISH", "bench", "x"); err != nil {
			b.Fatalf("PUBLISH = %v, want nil", err)
		}
		select {
		case at := <-got:
			notice = append(notice, at.Sub(start))
		case <-time.After(5 * time.Second):
			b.Fatal("the notice did not come within 5s")
		}
	}
	hold := report(b, "slept", slept)
	bound := func(handOff time.Duration) float64 { return 100 * float64(hold) / float64(hold+handOff) }
	b.ReportMetric(bound(report(b, "notice", notice)), "notice-bound-util-%")
	b.ReportMetric(bound(report(b, "rtt", rtt)), "rtt-bound-util-%")
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
