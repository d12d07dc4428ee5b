package line

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/strategy"
)

// cleanupTimeout bounds each try of the clean-up the line does on a
// fresh context: a Lock that gives up (Abandon, releasing a lock handed
// off to it), and the take-back of an attempt whose outcome is unknown
// (engine's takeBack); see cleanUpInBackground for the tries after the
// first.
const cleanupTimeout = time.Second

// A clean-up in the background (a take-back, a pass-on, an Abandon) is
// tried until it reaches Redis: cleanupRetry apart at first, twice as
// long each time after, at most cleanupRetryMax apart, so that once a
// fault heals it reaches Redis within cleanupRetryMax plus the try under
// way (bounded by cleanupTimeout) and one round trip.
const (
	cleanupRetry    = 5 * time.Millisecond
	cleanupRetryMax = 100 * time.Millisecond
)

// cleanUpInBackground runs try in a goroutine, each time on a fresh
// context bounded by cleanupTimeout, until it reports done, span has
// passed since it began (what it cleans up has gone stale or expired in
// Redis by then), or Close is called: a clean-up that cannot reach Redis
// while a fault lasts would otherwise leave behind what it cleans up (a
// lock, a waiter's place in a line) until that expires, long after the
// fault healed. A try that panics (a Pool of the user's) counts as
// failed. The goroutine ends within span plus cleanupTimeout, or within
// cleanupTimeout of Close, which waits for it (bg).
func (l *Line) cleanUpInBackground(span time.Duration, try func(ctx context.Context) (done bool)) {
	l.bg.Add(1)
	go func() {
		defer l.bg.Done()
		end := time.Now().Add(span)
		wait := cleanupRetry
		for {
			if tryCleanUp(try) || !time.Now().Before(end) {
				return
			}
			t := time.NewTimer(min(wait, time.Until(end)))
			select {
			case <-l.closed:
				t.Stop()
				return
			case <-t.C:
			}
			wait = min(2*wait, cleanupRetryMax)
		}
	}()
}

// tryCleanUp runs try once on a fresh context bounded by cleanupTimeout,
// and reports whether it is done; a panic is a failed try.
func tryCleanUp(try func(ctx context.Context) bool) (done bool) {
	defer func() {
		if recover() != nil {
			done = false
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	return try(ctx)
}

// ReleaseInBackground runs the technique's owner-checked release of h in
// the background (cleanUpInBackground), for up to span, until it
// releases, finds h no longer held, or Redis answers with an error (the
// script ran): the release checks the owner, so trying again is harmless.
func (l *Line) ReleaseInBackground(h Held, span time.Duration) {
	l.cleanUpInBackground(span, func(ctx context.Context) bool {
		return reachedRedis(l.tech.Release(ctx, h))
	})
}

// releaseOrRetry releases h on a fresh context bounded by cleanupTimeout,
// and, when that does not reach Redis, goes on trying in the background
// (ReleaseInBackground) for up to the Locker's TTL: h is a lock handed to
// a waiter of this Locker that no longer wants it.
func (l *Line) releaseOrRetry(ctx context.Context, h Held) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if !reachedRedis(l.tech.Release(ctx, h)) {
		l.ReleaseInBackground(h, l.ttl)
	}
}

// reachedRedis reports whether a clean-up that returned err is done: it
// succeeded, found nothing to do (strategy.ErrNotHeld), or its script
// failed in Redis ("ERR ...", a bad fencing counter: trying again would
// not change the answer). Any other failure (a connection's, or a
// server's that says to try later: LOADING, BUSY, OOM, READONLY, ...) is
// tried again.
func reachedRedis(err error) bool {
	var reply redis.Error
	return err == nil || errors.Is(err, strategy.ErrNotHeld) ||
		errors.As(err, &reply) && strings.HasPrefix(string(reply), "ERR ")
}

// Idle blocks until the clean-ups running in the background (take-backs,
// pass-ons, Abandons tried again) have ended, or returns ctx.Err() when
// ctx ends first. Each ends once it reaches Redis, its span passes, or
// Close is called.
func (l *Line) Idle(ctx context.Context) error { return l.bg.Wait(ctx) }
