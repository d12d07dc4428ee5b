package engine

// LineLen returns how many of l's Lock calls wait in the local line of the
// Redis key rkey, for tests of package engine_test.
func LineLen(l *Locker, rkey string) int {
	sh := l.lines.shard(rkey)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if ln := sh.byKey[rkey]; ln != nil {
		return len(ln.waiters)
	}
	return 0
}

// Notify delivers a release notice to l as its Hub would, for tests of
// package engine_test.
func Notify(l *Locker, channel, body string) { l.onNotice(channel, body) }
