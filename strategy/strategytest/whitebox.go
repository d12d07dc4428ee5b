package strategytest

import "github.com/lockzoo/lockzoo/internal/fault"

// windows are the fault points where a technique's races happen. Scenarios
// stop or crash clients there to make each race happen on every run.
type windows struct {
	// midAcquire is between the steps of a non-atomic acquire; "" when the
	// acquire is one step.
	midAcquire string
	// release is where a releasing client is stopped so that its lock can
	// expire and change hands before the release goes on.
	release string
}

// windowsOf returns the fault points of lockzoo's technique name, and false
// for a technique the suite does not know (a black-box target).
func windowsOf(name string) (windows, bool) {
	switch name {
	case "setnx_expire":
		return windows{midAcquire: fault.SetNXExpireAcquireAfterSetNX, release: fault.SetNXExpireReleaseAfterWatch}, true
	case "getset_timestamp":
		return windows{release: fault.GetSetTimestampReleaseAfterCheck}, true
	case "watch_multi":
		return windows{release: fault.WatchMultiReleaseAfterWatch}, true
	case "set_nx_ex":
		return windows{release: fault.SetNXExReleaseAfterGet}, true
	case "lua_release", "redlock":
		return windows{release: fault.ReleaseBefore}, true
	}
	return windows{}, false
}
