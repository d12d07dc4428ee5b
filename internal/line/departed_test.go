package line

import (
	"testing"
	"time"
)

// TestDeparted: a departed waiter is taken once, within the horizon, for
// its own key and name only; one that left longer ago is forgotten; a
// Locker without a line in Redis remembers nothing.
func TestDeparted(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name    string
		horizon time.Duration
		key     string
		waiter  string
		at      time.Duration // after t0, when the hand-off comes
		want    bool
	}{
		{"within the horizon", time.Second, "k", "w", 900 * time.Millisecond, true},
		{"at the horizon", time.Second, "k", "w", time.Second, true},
		{"past the horizon", time.Second, "k", "w", time.Second + time.Millisecond, false},
		{"another key", time.Second, "k2", "w", 0, false},
		{"another waiter", time.Second, "k", "w2", 0, false},
		{"no line in Redis", 0, "k", "w", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := departed{horizon: tt.horizon}
			d.add("k", "w", t0)
			if got := d.take(tt.key, tt.waiter, t0.Add(tt.at)); got != tt.want {
				t.Errorf("take(%q, %q) %v after it left = %v, want %v", tt.key, tt.waiter, tt.at, got, tt.want)
			}
			if d.take(tt.key, tt.waiter, t0.Add(tt.at)) {
				t.Errorf("second take(%q, %q) = true, want false: a lock is handed to a waiter once", tt.key, tt.waiter)
			}
		})
	}
	t.Run("forgets the old ones as others leave", func(t *testing.T) {
		d := departed{horizon: time.Second}
		for i := range 100 {
			d.add("k", string(rune('a'+i%26))+string(rune('0'+i/26)), t0.Add(time.Duration(i)*100*time.Millisecond))
		}
		if n := len(d.order); n > 11 {
			t.Errorf("after 100 departures 100 ms apart, %d remembered, want at most 11 (a 1s horizon)", n)
		}
		if len(d.byName) != len(d.order) {
			t.Errorf("byName holds %d, order %d; want them alike", len(d.byName), len(d.order))
		}
	})
}
