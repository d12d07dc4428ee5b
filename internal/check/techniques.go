package check

import "slices"

// Technique names, as strategy.Properties.Name gives them (the test
// compares them with internal/techniques).
const (
	setnxExpire     = "setnx_expire"
	method1         = "getset_timestamp/method1"
	method2         = "getset_timestamp/method2"
	getsetTimestamp = "getset_timestamp"
	watchMulti      = "watch_multi"
	setNXEX         = "set_nx_ex"
	luaRelease      = "lua_release"
	redlock         = "redlock"
)

// allTechniques lists every technique in internal/techniques' order.
func allTechniques() []string {
	return []string{setnxExpire, method1, method2, getsetTimestamp, watchMulti, setNXEX, luaRelease, redlock}
}

// withTTL lists the techniques whose lock keys carry a Redis expiry: the
// getset_timestamp family stores a timestamp and sets none.
func withTTL() []string {
	return []string{setnxExpire, watchMulti, setNXEX, luaRelease, redlock}
}

// scripted lists the techniques that run Lua scripts.
func scripted() []string { return []string{luaRelease, redlock} }

// engineCommands are the commands every technique sends through the shared
// engine (internal/engine: the owner-checked release, the notices) and
// internal/notify (waiting for a release).
func engineCommands() []string {
	return []string{"GET", "SET", "DEL", "WATCH", "UNWATCH", "MULTI", "EXEC", "PUBLISH", "SUBSCRIBE", "UNSUBSCRIBE"}
}

// ownCommands are the commands each technique sends besides the engine's.
// lua_release's and redlock's scripts run more inside Redis (see
// access.lua).
func ownCommands(technique string) []string {
	switch technique {
	case setnxExpire:
		return []string{"SETNX", "EXPIRE", "TTL"}
	case method1, method2:
		return []string{"SETNX"}
	case getsetTimestamp:
		return []string{"SETNX", "GETSET"}
	case watchMulti:
		return []string{"PEXPIRE"}
	case setNXEX:
		return []string{"EXPIRE"}
	case luaRelease:
		return []string{"EVALSHA", "EVAL"}
	case redlock:
		return []string{"EVALSHA", "EVAL", "INFO", "CLIENT"}
	}
	return nil
}

// neededCommands returns every command some technique sends, sorted.
func neededCommands() []string {
	var all []string
	for _, t := range allTechniques() {
		all = append(all, ownCommands(t)...)
	}
	all = append(all, engineCommands()...)
	slices.Sort(all)
	return slices.Compact(all)
}

// usersOf returns the techniques that send cmd: all of them for an engine
// command.
func usersOf(cmd string) []string {
	if slices.Contains(engineCommands(), cmd) {
		return allTechniques()
	}
	var out []string
	for _, t := range allTechniques() {
		if slices.Contains(ownCommands(t), cmd) {
			out = append(out, t)
		}
	}
	return out
}
