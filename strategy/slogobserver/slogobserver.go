package slogobserver

import (
	"context"
	"log/slog"

	"github.com/lockzoo/lockzoo/strategy"
)

// Levels are the levels Observer writes each kind of event at.
type Levels struct {
	Acquired, Released, Extended, HandedOff slog.Level
	// NotAcquired, by Reason.
	Taken, Unreachable, Context, Closed slog.Level
	// Lost, by LostReason.
	NotHeld, DeadlinePassed slog.Level
}

// DefaultLevels returns the levels New uses: Debug for the normal life of
// a lock (acquired, released, extended, handed off), Info for a lock that
// was taken or a closed Locker, Warn for a Lock that gave up on its ctx and
// for a late Unlock or Extend, and Error for unreachable Redis and a lock
// found lost.
func DefaultLevels() Levels {
	return Levels{
		Acquired: slog.LevelDebug, Released: slog.LevelDebug, Extended: slog.LevelDebug, HandedOff: slog.LevelDebug,
		Taken: slog.LevelInfo, Unreachable: slog.LevelError, Context: slog.LevelWarn, Closed: slog.LevelInfo,
		NotHeld: slog.LevelError, DeadlinePassed: slog.LevelWarn,
	}
}

// Observer writes lock events to a Logger; see the package documentation.
// It is safe for concurrent use when its Logger's Handler is (slog's are).
type Observer struct {
	logger *slog.Logger
	levels Levels
}

var _ strategy.Observer = (*Observer)(nil)

// New returns an Observer that writes to logger (nil means slog.Default(),
// as it is when New is called) at DefaultLevels.
func New(logger *slog.Logger) *Observer { return NewWithLevels(logger, DefaultLevels()) }

// NewWithLevels is New with the levels of your choice.
func NewWithLevels(logger *slog.Logger, levels Levels) *Observer {
	if logger == nil {
		logger = slog.Default()
	}
	return &Observer{logger: logger, levels: levels}
}

// skip reports whether the Logger does not enable level: then the event's
// attributes are not even built.
func (o *Observer) skip(ctx context.Context, level slog.Level) bool {
	return !o.logger.Enabled(ctx, level)
}

// Acquired writes "lock acquired".
func (o *Observer) Acquired(ctx context.Context, e strategy.AcquiredEvent) {
	if o.skip(ctx, o.levels.Acquired) {
		return
	}
	o.logger.LogAttrs(ctx, o.levels.Acquired, "lock acquired",
		slog.String("technique", e.Technique), slog.String("op", e.Op), slog.String("key", e.Key),
		slog.String("token", e.Token), slog.Uint64("fence", e.Fence),
		slog.Duration("wait", e.Wait), slog.Int("attempts", e.Attempts), slog.Bool("handed_off", e.HandedOff),
	)
}

// NotAcquired writes "lock not acquired", at the level of e.Reason.
func (o *Observer) NotAcquired(ctx context.Context, e strategy.NotAcquiredEvent) {
	level := o.levels.Taken
	switch e.Reason {
	case strategy.ReasonUnreachable:
		level = o.levels.Unreachable
	case strategy.ReasonContext:
		level = o.levels.Context
	case strategy.ReasonClosed:
		level = o.levels.Closed
	}
	if o.skip(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("technique", e.Technique), slog.String("op", e.Op), slog.String("key", e.Key),
		slog.String("reason", e.Reason.String()), slog.Duration("wait", e.Wait), slog.Int("attempts", e.Attempts),
	}
	if e.Err != nil {
		attrs = append(attrs, slog.String("err", e.Err.Error()))
	}
	if e.LastFailure != nil {
		attrs = append(attrs, slog.String("last_failure", e.LastFailure.Error()))
	}
	o.logger.LogAttrs(ctx, level, "lock not acquired", attrs...)
}

// Released writes "lock released".
func (o *Observer) Released(ctx context.Context, e strategy.ReleasedEvent) {
	if o.skip(ctx, o.levels.Released) {
		return
	}
	o.logger.LogAttrs(ctx, o.levels.Released, "lock released",
		slog.String("technique", e.Technique), slog.String("key", e.Key),
		slog.String("token", e.Token), slog.Uint64("fence", e.Fence), slog.Duration("held", e.Held),
		slog.Bool("not_held", e.NotHeld), slog.Bool("passed_on", e.PassedOn),
	)
}

// Extended writes "lock extended".
func (o *Observer) Extended(ctx context.Context, e strategy.ExtendedEvent) {
	if o.skip(ctx, o.levels.Extended) {
		return
	}
	o.logger.LogAttrs(ctx, o.levels.Extended, "lock extended",
		slog.String("technique", e.Technique), slog.String("key", e.Key),
		slog.String("token", e.Token), slog.Uint64("fence", e.Fence),
		slog.Duration("ttl", e.TTL), slog.Time("deadline", e.Deadline), slog.Duration("held", e.Held),
	)
}

// Lost writes "lock lost", at the level of e.Reason.
func (o *Observer) Lost(ctx context.Context, e strategy.LostEvent) {
	level := o.levels.NotHeld
	if e.Reason == strategy.LostDeadlinePassed {
		level = o.levels.DeadlinePassed
	}
	if o.skip(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("technique", e.Technique), slog.String("op", e.Op), slog.String("key", e.Key),
		slog.String("token", e.Token), slog.Uint64("fence", e.Fence),
		slog.String("reason", e.Reason.String()), slog.Duration("held", e.Held), slog.Duration("late", e.Late),
	}
	if e.Err != nil {
		attrs = append(attrs, slog.String("err", e.Err.Error()))
	}
	o.logger.LogAttrs(ctx, level, "lock lost", attrs...)
}

// HandedOff writes "lock handed off".
func (o *Observer) HandedOff(ctx context.Context, e strategy.HandOffEvent) {
	if o.skip(ctx, o.levels.HandedOff) {
		return
	}
	o.logger.LogAttrs(ctx, o.levels.HandedOff, "lock handed off",
		slog.String("technique", e.Technique), slog.String("key", e.Key),
		slog.String("token", e.Token), slog.Uint64("fence", e.Fence),
		slog.Duration("wait", e.Wait), slog.Int("attempts", e.Attempts), slog.Bool("local", e.Local),
	)
}
