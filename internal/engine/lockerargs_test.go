package engine_test

import (
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/engine"
)

// TestLockerArgs: the TTL and name Set recorded come back boxed, without
// an allocation; any other TTL or name, and a zero LockerArgs, come back
// as values of their own.
func TestLockerArgs(t *testing.T) {
	var set engine.LockerArgs
	set.Set(1500*time.Millisecond, "L1")
	tests := []struct {
		name       string
		args       *engine.LockerArgs
		ttl        time.Duration
		locker     string
		wantTTL    int64
		wantAllocs float64 // per TTL+Locker pair
	}{
		{"recorded", &set, 1500 * time.Millisecond, "L1", 1500, 0},
		{"other TTL and name", &set, 2 * time.Second, "L2", 2000, 2},
		{"zero value", &engine.LockerArgs{}, time.Second, "L1", 1000, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.args.TTL(tt.ttl); got != tt.wantTTL {
				t.Errorf("TTL(%v) = %v (%T), want %d", tt.ttl, got, got, tt.wantTTL)
			}
			if got := tt.args.Locker(tt.locker); got != tt.locker {
				t.Errorf("Locker(%q) = %v, want %q", tt.locker, got, tt.locker)
			}
			var sink [2]any
			allocs := testing.AllocsPerRun(100, func() {
				sink[0], sink[1] = tt.args.TTL(tt.ttl), tt.args.Locker(tt.locker)
			})
			if allocs != tt.wantAllocs {
				t.Errorf("TTL+Locker allocate %v times, want %v", allocs, tt.wantAllocs)
			}
		})
	}
}
