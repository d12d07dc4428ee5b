package redlock_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/redlock"
	"github.com/lockzoo/lockzoo/strategy"
)

// threePools returns three pools that are never dialled: New does not talk
// to Redis.
func threePools() []strategy.Pool {
	return []strategy.Pool{&redis.Pool{}, &redis.Pool{}, &redis.Pool{}}
}

func TestNewInvalidConfig(t *testing.T) {
	locktest.NoLeaks(t)
	tests := []struct {
		name  string
		pools []strategy.Pool
		cfg   redlock.Config
		field string // the error must name it
	}{
		{"no pools", nil, redlock.Config{}, "pools"},
		{"empty pools", []strategy.Pool{}, redlock.Config{}, "pools"},
		{"nil pool", []strategy.Pool{&redis.Pool{}, &redis.Pool{}, nil}, redlock.Config{}, "pools[2]"},
		{"typed nil pool", []strategy.Pool{&redis.Pool{}, (*redis.Pool)(nil)}, redlock.Config{}, "pools[1]"},
		{"negative quorum", threePools(), redlock.Config{Quorum: -1}, "Quorum"},
		{"quorum above N", threePools(), redlock.Config{Quorum: 4}, "Quorum"},
		{"negative drift", threePools(), redlock.Config{DriftFactor: -0.01}, "DriftFactor"},
		{"negative node timeout", threePools(), redlock.Config{NodeTimeout: -time.Millisecond}, "NodeTimeout"},
		{"negative TTL", threePools(), redlock.Config{Config: strategy.Config{TTL: -time.Second}}, "TTL"},
		{"TTL below 1ms", threePools(), redlock.Config{Config: strategy.Config{TTL: 500 * time.Microsecond}}, "TTL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := redlock.New(tt.pools, tt.cfg)
			if !errors.Is(err, strategy.ErrInvalidConfig) {
				t.Fatalf("New() = %v, %v; want an error wrapping %v", l, err, strategy.ErrInvalidConfig)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("New() error %q does not name the field %q", err, tt.field)
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	locktest.NoLeaks(t)
	tests := []struct {
		name  string
		pools int
		cfg   redlock.Config
		want  redlock.Config // the fields checked: Quorum, DriftFactor, NodeTimeout, TTL
	}{
		{"five nodes", 5, redlock.Config{},
			redlock.Config{Quorum: 3, DriftFactor: 0.01, NodeTimeout: 250 * time.Millisecond, Config: strategy.Config{TTL: 10 * time.Second}}},
		{"four nodes", 4, redlock.Config{}, redlock.Config{Quorum: 3, DriftFactor: 0.01, NodeTimeout: 250 * time.Millisecond, Config: strategy.Config{TTL: 10 * time.Second}}},
		{"one node", 1, redlock.Config{}, redlock.Config{Quorum: 1, DriftFactor: 0.01, NodeTimeout: 250 * time.Millisecond, Config: strategy.Config{TTL: 10 * time.Second}}},
		{"short TTL: a tenth", 3, redlock.Config{Config: strategy.Config{TTL: 300 * time.Millisecond}},
			redlock.Config{Quorum: 2, DriftFactor: 0.01, NodeTimeout: 30 * time.Millisecond, Config: strategy.Config{TTL: 300 * time.Millisecond}}},
		{"tiny TTL: the floor", 3, redlock.Config{Config: strategy.Config{TTL: 20 * time.Millisecond}},
			redlock.Config{Quorum: 2, DriftFactor: 0.01, NodeTimeout: redlock.MinNodeTimeout, Config: strategy.Config{TTL: 20 * time.Millisecond}}},
		{"explicit values kept", 3, redlock.Config{Quorum: 1, DriftFactor: 0.2, NodeTimeout: 2 * time.Second},
			redlock.Config{Quorum: 1, DriftFactor: 0.2, NodeTimeout: 2 * time.Second, Config: strategy.Config{TTL: 10 * time.Second}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pools := make([]strategy.Pool, tt.pools)
			for i := range pools {
				pools[i] = &redis.Pool{}
			}
			l, err := redlock.New(pools, tt.cfg)
			if err != nil {
				t.Fatalf("New() = %v, want nil", err)
			}
			got := l.Config()
			if got.Quorum != tt.want.Quorum || got.DriftFactor != tt.want.DriftFactor ||
				got.NodeTimeout != tt.want.NodeTimeout || got.TTL != tt.want.TTL {
				t.Errorf("Config() = Quorum %d, DriftFactor %v, NodeTimeout %v, TTL %v; want %d, %v, %v, %v",
					got.Quorum, got.DriftFactor, got.NodeTimeout, got.TTL,
					tt.want.Quorum, tt.want.DriftFactor, tt.want.NodeTimeout, tt.want.TTL)
			}
			if got.Prefix != strategy.DefaultPrefix || got.Retry == nil || got.Clock == nil {
				t.Errorf("Config() = Prefix %q, Retry %v, Clock set %v; want the strategy defaults",
					got.Prefix, got.Retry, got.Clock != nil)
			}
		})
	}
}

// TestDefaultRetry: a nil Retry becomes redlock's DefaultRetry, whose
// waits start within [DefaultRetryMin/2, DefaultRetryMin] and never pass
// DefaultRetryMax; an explicit Retry is kept.
func TestDefaultRetry(t *testing.T) {
	pools := []strategy.Pool{&redis.Pool{}, &redis.Pool{}, &redis.Pool{}}
	l, err := redlock.New(pools, redlock.Config{})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	retry := l.Config().Retry
	for range 100 {
		if w, ok := retry.Backoff(1); !ok || w < redlock.DefaultRetryMin/2 || w > redlock.DefaultRetryMin {
			t.Fatalf("default Retry.Backoff(1) = %v, %v; want within [%v, %v], true", w, ok, redlock.DefaultRetryMin/2, redlock.DefaultRetryMin)
		}
		if w, ok := retry.Backoff(50); !ok || w < redlock.DefaultRetryMax/2 || w > redlock.DefaultRetryMax {
			t.Fatalf("default Retry.Backoff(50) = %v, %v; want within [%v, %v], true", w, ok, redlock.DefaultRetryMax/2, redlock.DefaultRetryMax)
		}
	}
	l, err = redlock.New(pools, redlock.Config{Config: strategy.Config{Retry: strategy.Fixed(time.Second)}})
	if err != nil {
		t.Fatalf("New() = %v, want nil", err)
	}
	if w, ok := l.Config().Retry.Backoff(1); !ok || w != time.Second {
		t.Errorf("explicit Retry.Backoff(1) = %v, %v; want 1s, true", w, ok)
	}
}

// TestNewDuplicatePool checks that a pool given twice is accepted (it is
// documented as unsafe, not rejected).
func TestNewDuplicatePool(t *testing.T) {
	locktest.NoLeaks(t)
	p := &redis.Pool{}
	if _, err := redlock.New([]strategy.Pool{p, p, &redis.Pool{}}, redlock.Config{}); err != nil {
		t.Errorf("New() with a duplicate pool = %v, want nil", err)
	}
}
