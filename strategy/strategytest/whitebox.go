package strategytest

import (
	"context"
	"fmt"

	"github.com/lockzoo/lockzoo/internal/fault"
	"github.com/lockzoo/lockzoo/internal/protocol"
	"github.com/lockzoo/lockzoo/strategy"
)

// windows are the fault points where a technique's races happen. Scenarios
// stop or crash clients there to make each race happen on every run.
type windows struct {
	// midAcquire is between the steps of a non-atomic acquire; "" when the
	// acquire is one step.
	midAcquire string
	// release is where a releasing client is stopped so that its lock can
	// expire and change hands before the release goes on.
	release string
	// takeover is where a waiter that has found the lock expired stops
	// before it takes the lock over (the article's p2 and p3 both stop
	// there); "" when the technique's takeover is the ordinary acquire of a
	// key Redis expired. A technique with such a point keeps the expiry
	// time in the value, by the clients' clocks: the key stays in Redis.
	takeover string
	// neverExpires is true for a technique whose lock has no expiry at
	// all: it ends only when some client deletes it.
	neverExpires bool
}

// windowsOf returns the fault points of lockzoo's technique name, and false
// for a technique the suite does not know (a black-box target).
func windowsOf(name string) (windows, bool) {
	switch name {
	case "setnx_expire":
		return windows{midAcquire: fault.SetNXExpireAcquireAfterSetNX, release: fault.SetNXExpireReleaseAfterWatch}, true
	case "getset_timestamp/method1":
		return windows{release: fault.ReleaseBefore, neverExpires: true}, true
	case "getset_timestamp/method2":
		return windows{release: fault.ReleaseBefore, takeover: fault.GetSetTimestampMethod2AcquireAfterGet}, true
	case "getset_timestamp":
		return windows{release: fault.GetSetTimestampReleaseAfterCheck, takeover: fault.GetSetTimestampAcquireBeforeGetSet}, true
	case "watch_multi":
		return windows{release: fault.WatchMultiReleaseAfterWatch}, true
	case "set_nx_ex":
		return windows{release: fault.SetNXExReleaseAfterGet}, true
	case "lua_release", "redlock":
		return windows{release: fault.ReleaseBefore}, true
	}
	return windows{}, false
}

// expires reports whether a technique's lock ends by itself when its
// holder dies: every technique but one the suite knows never expires.
func expires(p strategy.Properties) bool {
	w, _ := windowsOf(p.Name)
	return !w.neverExpires
}

// freeForever stands in for the expiry a scenario waits for, on a
// technique whose lock never expires: another client deletes lock name, as
// any client's DEL can. It returns the words for the scenario's account,
// "" when the technique's lock expires and nothing was done.
func (e *env) freeForever(ctx context.Context, p strategy.Properties, name string) (string, error) {
	if expires(p) {
		return "", nil
	}
	ctx = as(ctx, "D")
	e.rec.note("D", "another client, D, frees the lock that never expires: any client's DEL can")
	for _, key := range protocol.LockKeys(e.prefix, name) {
		if _, err := e.do(ctx, 0, "DEL", key); err != nil {
			return "", fmt.Errorf("DEL %s: %w", key, err)
		}
	}
	return "the lock never expires, so another client's DEL freed it; ", nil
}
