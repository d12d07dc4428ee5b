package slogobserver_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/strategy"
	"github.com/lockzoo/lockzoo/strategy/slogobserver"
)

// capture is a slog.Handler that keeps every record at or above min.
type capture struct {
	min     slog.Level
	mu      sync.Mutex
	records []slog.Record
}

func (c *capture) Enabled(_ context.Context, l slog.Level) bool { return l >= c.min }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records = append(c.records, r.Clone())
	return nil
}
func (c *capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *capture) WithGroup(string) slog.Handler      { return c }

// attrs returns r's attributes as strings.
func attrs(r slog.Record) map[string]string {
	m := map[string]string{}
	r.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.String()
		return true
	})
	return m
}

var errNotHeld = fmt.Errorf("lockzoo: lua_release: unlock %q: %w", "k", strategy.ErrNotHeld)

func TestLevelsAndAttributes(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		emit  func(strategy.Observer)
		level slog.Level
		msg   string
		want  map[string]string // some of the attributes
	}{
		{"acquired", func(o strategy.Observer) {
			o.Acquired(ctx, strategy.AcquiredEvent{Technique: "lua_release", Op: strategy.OpLock, Key: "k", Fence: 7, Wait: 3 * time.Millisecond, Attempts: 2})
		}, slog.LevelDebug, "lock acquired", map[string]string{"technique": "lua_release", "op": "lock", "key": "k", "fence": "7", "wait": "3ms", "attempts": "2", "handed_off": "false"}},
		{"taken", func(o strategy.Observer) {
			o.NotAcquired(ctx, strategy.NotAcquiredEvent{Op: strategy.OpTryLock, Key: "k", Reason: strategy.ReasonTaken, Attempts: 1, Err: strategy.ErrNotAcquired})
		}, slog.LevelInfo, "lock not acquired", map[string]string{"reason": "taken", "op": "trylock", "err": strategy.ErrNotAcquired.Error()}},
		{"ctx", func(o strategy.Observer) {
			o.NotAcquired(ctx, strategy.NotAcquiredEvent{Op: strategy.OpLock, Key: "k", Reason: strategy.ReasonContext, Err: context.DeadlineExceeded})
		}, slog.LevelWarn, "lock not acquired", map[string]string{"reason": "ctx"}},
		{"unreachable", func(o strategy.Observer) {
			down := errors.New("connection refused")
			o.NotAcquired(ctx, strategy.NotAcquiredEvent{Op: strategy.OpLock, Key: "k", Reason: strategy.ReasonUnreachable, Err: down, LastFailure: down})
		}, slog.LevelError, "lock not acquired", map[string]string{"reason": "unreachable", "last_failure": "connection refused"}},
		{"closed", func(o strategy.Observer) {
			o.NotAcquired(ctx, strategy.NotAcquiredEvent{Key: "k", Reason: strategy.ReasonClosed})
		}, slog.LevelInfo, "lock not acquired", map[string]string{"reason": "closed"}},
		{"released", func(o strategy.Observer) {
			o.Released(ctx, strategy.ReleasedEvent{Key: "k", Held: time.Second, PassedOn: true})
		}, slog.LevelDebug, "lock released", map[string]string{"held": "1s", "passed_on": "true", "not_held": "false"}},
		{"extended", func(o strategy.Observer) {
			o.Extended(ctx, strategy.ExtendedEvent{Key: "k", TTL: 10 * time.Second})
		}, slog.LevelDebug, "lock extended", map[string]string{"ttl": "10s"}},
		{"lost", func(o strategy.Observer) {
			o.Lost(ctx, strategy.LostEvent{Op: strategy.OpUnlock, Key: "k", Reason: strategy.LostNotHeld, Late: time.Second, Err: errNotHeld})
		}, slog.LevelError, "lock lost", map[string]string{"reason": "not-held", "op": "unlock", "late": "1s", "err": errNotHeld.Error()}},
		{"late", func(o strategy.Observer) {
			o.Lost(ctx, strategy.LostEvent{Op: strategy.OpExtend, Key: "k", Reason: strategy.LostDeadlinePassed})
		}, slog.LevelWarn, "lock lost", map[string]string{"reason": "deadline-passed", "op": "extend"}},
		{"handed off", func(o strategy.Observer) {
			o.HandedOff(ctx, strategy.HandOffEvent{Key: "k", Local: true})
		}, slog.LevelDebug, "lock handed off", map[string]string{"local": "true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &capture{min: slog.LevelDebug}
			tt.emit(slogobserver.New(slog.New(h)))
			if len(h.records) != 1 {
				t.Fatalf("records = %d, want 1", len(h.records))
			}
			r := h.records[0]
			if r.Level != tt.level || r.Message != tt.msg {
				t.Errorf("record = %v %q, want %v %q", r.Level, r.Message, tt.level, tt.msg)
			}
			got := attrs(r)
			if got["key"] != "k" {
				t.Errorf("attribute key = %q, want %q", got["key"], "k")
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("attribute %s = %q, want %q", k, got[k], v)
				}
			}

			quiet := &capture{min: tt.level + 1}
			tt.emit(slogobserver.New(slog.New(quiet)))
			if len(quiet.records) != 0 {
				t.Errorf("records at level above %v = %d, want 0", tt.level, len(quiet.records))
			}
		})
	}
}

func TestNewWithLevels(t *testing.T) {
	h := &capture{min: slog.LevelInfo}
	levels := slogobserver.DefaultLevels()
	levels.Acquired = slog.LevelInfo
	o := slogobserver.NewWithLevels(slog.New(h), levels)
	o.Acquired(context.Background(), strategy.AcquiredEvent{Key: "k"})
	o.Released(context.Background(), strategy.ReleasedEvent{Key: "k"}) // still Debug
	if len(h.records) != 1 || h.records[0].Level != slog.LevelInfo || h.records[0].Message != "lock acquired" {
		t.Errorf("records = %v, want one Info \"lock acquired\"", h.records)
	}
}

func TestNilLoggerIsDefault(t *testing.T) {
	h := &capture{min: slog.LevelDebug}
	old := slog.Default()
	slog.SetDefault(slog.New(h))
	t.Cleanup(func() { slog.SetDefault(old) })
	slogobserver.New(nil).Lost(context.Background(), strategy.LostEvent{Key: "k", Reason: strategy.LostNotHeld})
	if len(h.records) != 1 {
		t.Errorf("records written to slog.Default() = %d, want 1", len(h.records))
	}
}

// BenchmarkDisabled: an event whose level the Logger does not enable.
func BenchmarkDisabled(b *testing.B) {
	o := slogobserver.New(slog.New(&capture{min: slog.LevelInfo}))
	ctx := context.Background()
	e := strategy.AcquiredEvent{Technique: "lua_release", Op: strategy.OpLock, Key: "k"}
	b.ReportAllocs()
	for b.Loop() {
		o.Acquired(ctx, e)
	}
}
