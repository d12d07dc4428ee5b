package strategy_test

import (
	"errors"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/strategy"
)

func TestConfigWithDefaults(t *testing.T) {
	tests := []struct {
		name    string
		cfg     strategy.Config
		wantTTL time.Duration
		wantErr error
	}{
		{"zero", strategy.Config{}, strategy.DefaultTTL, nil},
		{"explicit", strategy.Config{TTL: time.Second}, time.Second, nil},
		{"minimum", strategy.Config{TTL: time.Millisecond}, time.Millisecond, nil},
		{"negative", strategy.Config{TTL: -time.Second}, 0, strategy.ErrInvalidConfig},
		{"below 1ms", strategy.Config{TTL: 999 * time.Microsecond}, 0, strategy.ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cfg.WithDefaults()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("WithDefaults() = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got.TTL != tt.wantTTL || got.Prefix != strategy.DefaultPrefix || got.Retry == nil || got.Clock == nil {
				t.Errorf("WithDefaults() = %+v, want TTL %v, prefix %q, Retry and Clock set", got, tt.wantTTL, strategy.DefaultPrefix)
			}
		})
	}
}

func TestRetryPolicies(t *testing.T) {
	tests := []struct {
		name     string
		policy   strategy.Retry
		attempt  int
		lo, hi   time.Duration
		wantMore bool
	}{
		{"no retry", strategy.NoRetry(), 1, 0, 0, false},
		{"fixed", strategy.Fixed(3 * time.Millisecond), 7, 3 * time.Millisecond, 3 * time.Millisecond, true},
		{"fixed negative", strategy.Fixed(-time.Second), 1, 0, 0, true},
		{"exponential first", strategy.Exponential(time.Millisecond, time.Second), 1, 500 * time.Microsecond, time.Millisecond, true},
		{"exponential fourth", strategy.Exponential(time.Millisecond, time.Second), 4, 4 * time.Millisecond, 8 * time.Millisecond, true},
		{"exponential capped", strategy.Exponential(time.Millisecond, 10*time.Millisecond), 60, 5 * time.Millisecond, 10 * time.Millisecond, true},
		{"exponential hi below lo", strategy.Exponential(time.Millisecond, 0), 5, 500 * time.Microsecond, time.Millisecond, true},
		{"default cap", strategy.DefaultRetry(), 100, strategy.DefaultRetryMax / 2, strategy.DefaultRetryMax, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 200 { // jitter: every draw must stay in bounds
				d, more := tt.policy.Backoff(tt.attempt)
				if more != tt.wantMore {
					t.Fatalf("Backoff(%d) more = %v, want %v", tt.attempt, more, tt.wantMore)
				}
				if more && (d < tt.lo || d > tt.hi) {
					t.Fatalf("Backoff(%d) = %v, want within [%v, %v]", tt.attempt, d, tt.lo, tt.hi)
				}
			}
		})
	}
}

func TestExponentialJitters(t *testing.T) {
	p := strategy.Exponential(time.Millisecond, time.Second)
	seen := map[time.Duration]bool{}
	for range 100 {
		d, _ := p.Backoff(3)
		seen[d] = true
	}
	if len(seen) < 10 {
		t.Errorf("Backoff(3) gave %d distinct waits in 100 draws, want jitter (>= 10)", len(seen))
	}
}

func TestConfigReplicas(t *testing.T) {
	tests := []struct {
		name        string
		cfg         strategy.Config
		wantTimeout time.Duration
		wantErr     error
	}{
		{"none", strategy.Config{}, 0, nil},
		{"default timeout", strategy.Config{Replicas: 2}, strategy.DefaultReplicaTimeout, nil},
		{"default for WaitAOF", strategy.Config{WaitAOF: true}, strategy.DefaultReplicaTimeout, nil},
		{"default capped at TTL/4", strategy.Config{Replicas: 1, TTL: 200 * time.Millisecond}, 50 * time.Millisecond, nil},
		{"explicit", strategy.Config{Replicas: 1, ReplicaTimeout: time.Second}, time.Second, nil},
		{"negative replicas", strategy.Config{Replicas: -1}, 0, strategy.ErrInvalidConfig},
		{"negative timeout", strategy.Config{Replicas: 1, ReplicaTimeout: -time.Millisecond}, 0, strategy.ErrInvalidConfig},
		{"timeout below 1ms", strategy.Config{Replicas: 1, ReplicaTimeout: 999 * time.Microsecond}, 0, strategy.ErrInvalidConfig},
		{"timeout at the TTL", strategy.Config{Replicas: 1, TTL: time.Second, ReplicaTimeout: time.Second}, 0, strategy.ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cfg.WithDefaults()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("WithDefaults() = %v, want %v", err, tt.wantErr)
			}
			if err == nil && got.ReplicaTimeout != tt.wantTimeout {
				t.Errorf("WithDefaults().ReplicaTimeout = %v, want %v", got.ReplicaTimeout, tt.wantTimeout)
			}
		})
	}
}
