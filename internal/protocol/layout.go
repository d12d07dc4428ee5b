package protocol

import "strings"

// Suffixes of the keys and channels derived from a lock key.
const (
	fenceSuffix  = ":fence"
	lineSuffix   = ":line"
	seenSuffix   = ":seen"
	noticeSuffix = ":notice"
)

// LockKey returns the Redis key of the lock name under prefix: prefix +
// name when that holds a hash tag of its own (so a user's "{tag}" decides
// the slot), else prefix + "{" + name + "}", or, for a name that starts
// with "}", prefix + "{" + tag + "}" + name with a tag of four bytes in
// the slot of prefix + name. (A prefix whose first braces are "{}" leaves
// no tag possible.) Every key KeysOf derives from
// it hashes to the same Redis Cluster slot and starts with prefix.
func LockKey(prefix, name string) string {
	if hasHashTag(prefix, name) {
		return prefix + name
	}
	if k := prefix + "{" + name + "}"; hasHashTag(k, "") || strings.IndexByte(prefix, '{') >= 0 {
		return k
	}
	// A name that starts with "}" would leave the "{" empty: the tag is
	// tagFor's, four bytes in the slot of prefix + name.
	return prefix + "{" + tagFor(Slot(prefix+name)) + "}" + name
}

// hasHashTag reports whether Redis Cluster hashes the key a + b by a tag:
// a "{" followed, later, by a "}" with at least one byte between them (the
// first "{" and the first "}" after it count). It looks at the two parts
// in place: this runs on every Lock and TryLock.
func hasHashTag(a, b string) bool {
	if open := strings.IndexByte(a, '{'); open >= 0 {
		rest := a[open+1:]
		if close := strings.IndexByte(rest, '}'); close >= 0 {
			return close > 0
		}
		return len(rest) > 0 && strings.IndexByte(b, '}') >= 0 || len(rest) == 0 && strings.IndexByte(b, '}') > 0
	}
	open := strings.IndexByte(b, '{')
	return open >= 0 && strings.IndexByte(b[open+1:], '}') > 0
}

// Keys are the Redis keys of one lock, in the order the scripts take them
// as KEYS.
type Keys struct {
	Lock  string // the lock itself
	Fence string // its fencing counter
	Line  string // its line of waiters: member -> order
	Seen  string // the waiters' last attempts: member -> ms
}

// KeysOf returns the keys of the lock whose key is lock (see LockKey). The
// three derived keys share one allocation: this runs on every attempt.
func KeysOf(lock string) Keys {
	all := lock + fenceSuffix + lock + lineSuffix + lock + seenSuffix
	n := len(lock)
	f, l := n+len(fenceSuffix), n+len(lineSuffix)
	return Keys{Lock: lock, Fence: all[:f], Line: all[f : f+l], Seen: all[f+l:]}
}

// All returns the keys as a script's KEYS: lock, fence, line, seen.
func (k Keys) All() []any { return []any{k.Lock, k.Fence, k.Line, k.Seen} }

// Channel is the pub/sub channel on which a release of the lock key lock
// is announced to anyone, in the lock's Redis Cluster slot, so that a
// release on a cluster can publish on it (SPUBLISH) in the transaction or
// script that deletes the lock:
//   - lock + ":notice" for a key with a hash tag;
//   - lock + ":notice{" + lock + "}" for a key without braces (the
//     article techniques' prefix + name), whose tag is the whole key;
//   - head + "{" + tag + "}:notice:" + lock for a key with braces but no
//     tag ("a{}b", "{"), where head is the key up to its first "{" (all
//     of it without one), so that the channel starts with the prefix as
//     the key does, and tag is four bytes in the key's slot (tagFor).
func Channel(lock string) string {
	switch {
	case hasHashTag(lock, ""):
		return lock + noticeSuffix
	case !strings.ContainsAny(lock, "{}"):
		return lock + noticeSuffix + "{" + lock + "}"
	}
	head := lock
	if i := strings.IndexByte(lock, '{'); i >= 0 {
		head = lock[:i]
	}
	return head + "{" + tagFor(Slot(lock)) + "}" + noticeSuffix + ":" + lock
}

// Inbox is the pub/sub channel on which the Locker named locker hears the
// notices for lock that concern its waiters: Channel(lock) + ":" + locker.
// Scripts build it the same way (inbox in package line's line.lua).
func Inbox(lock, locker string) string { return Channel(lock) + ":" + locker }

// LockOf returns the lock key a channel made by Channel or Inbox belongs
// to, and reports false for any other channel.
func LockOf(channel string) (string, bool) {
	if lock, ok := lockOfTagged(channel); ok {
		return lock, true
	}
	if lock, ok := strings.CutSuffix(channel, noticeSuffix); ok {
		return lock, true
	}
	if i := strings.Index(channel, noticeSuffix+"{"); i >= 0 {
		lock := channel[:i]
		if rest, ok := strings.CutPrefix(channel[i+len(noticeSuffix)+1:], lock); ok {
			if rest, ok = strings.CutPrefix(rest, "}"); ok && (rest == "" || rest[0] == ':') {
				return lock, true
			}
		}
	}
	if i := strings.LastIndex(channel, noticeSuffix+":"); i >= 0 {
		return channel[:i], true
	}
	return "", false
}

// lockOfTagged reads a channel or inbox of Channel's third form,
// head + "{" + tag + "}:notice:" + lock (+ ":" + locker), trying the
// longest lock first.
func lockOfTagged(channel string) (string, bool) {
	open := strings.IndexByte(channel, '{')
	if open < 0 {
		return "", false
	}
	head := open + len("{") + tagLen + len("}"+noticeSuffix+":")
	if len(channel) <= head || channel[open+1+tagLen:head] != "}"+noticeSuffix+":" {
		return "", false
	}
	for lock := channel[head:]; ; {
		if c := Channel(lock); len(c) <= len(channel) && c == channel[:len(c)] && (len(c) == len(channel) || channel[len(c)] == ':') {
			return lock, true
		}
		i := strings.LastIndexByte(lock, ':')
		if i < 0 {
			return "", false
		}
		lock = lock[:i]
	}
}

// LockKeys returns the keys a lockzoo technique may keep the lock name
// under: prefix + name (the article techniques) and LockKey(prefix, name)
// (lua_release and redlock), once when they are the same. Suites that
// look at a lock from outside, for any technique, try both.
func LockKeys(prefix, name string) []string {
	plain, tagged := prefix+name, LockKey(prefix, name)
	if plain == tagged {
		return []string{plain}
	}
	return []string{plain, tagged}
}
