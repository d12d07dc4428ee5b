package engine

// LineLen returns how many of l's Lock calls wait in the local line of the
// Redis key rkey, for tests of package engine_test.
func LineLen(l *Locker, rkey string) int { return l.line.Waiting(rkey) }

// Notify delivers a release notice to l as its Hub would, for tests of
// package engine_test.
func Notify(l *Locker, channel, body string) { l.line.OnNotice(0, channel, body) }
