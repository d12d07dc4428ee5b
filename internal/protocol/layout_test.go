package protocol

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLockKey(t *testing.T) {
	tests := []struct {
		prefix, name, want string
	}{
		{"lock:", "orders:42", "lock:{orders:42}"},
		{"app:", "orders:{42}", "app:orders:{42}"}, // the user's tag decides the slot
		{"{app}:", "x", "{app}:x"},                 // so does a tag in the prefix
		{"lock:", "a{}b", "lock:{a{}b}"},           // "{}" is no tag
		{"lock:", "a{b", "lock:{a{b}"},             // nor is an unclosed "{"
		{"lock:", "a}b{", "lock:{a}b{}"},           // nor "}" before "{"
		{"lock:", "x{y}z", "lock:x{y}z"},           // a tag in the middle
		{"", "k", "{k}"},                           // no prefix
		{"lock:", "{}x{y}", "lock:{{}x{y}}"},       // the first "{" counts: "{}" is empty
		{"app{", "x}", "app{x}"},                   // a tag across prefix and name
		{"app{", "}x", "app{{}x}"},                 // "{" + "}" across them is empty
		{"app{x", "y", "app{x{y}"},                 // an unclosed "{" in the prefix
		{"a{", "b{c}", "a{b{c}"},                   // the prefix's "{" counts first
		{"lock:", "}{", "lock:{3?30}}{"},           // "{}{" would be empty: a tag in the slot of "lock:}{"
		{"", "}x", "{6919}}x"},
		{"a{}", "}", "a{}{}}"}, // a prefix that opens with "{}" leaves no tag possible
	}
	for _, tt := range tests {
		t.Run(tt.prefix+tt.name, func(t *testing.T) {
			if got := LockKey(tt.prefix, tt.name); got != tt.want {
				t.Errorf("LockKey(%q, %q) = %q, want %q", tt.prefix, tt.name, got, tt.want)
			}
		})
	}
}

// TestHashTagAcrossParts checks hasHashTag(a, b), which looks at the two
// parts in place, against the rule applied to a + b, for every split of a
// set of keys.
func TestHashTagAcrossParts(t *testing.T) {
	whole := func(key string) bool { // the rule on the joined key
		open := strings.IndexByte(key, '{')
		return open >= 0 && strings.IndexByte(key[open+1:], '}') > 0
	}
	for _, key := range []string{"", "k", "{}", "{a}", "a{b}c", "a{}b", "}{", "a}b{c}", "{}x{y}", "{{}}", "x{", "x}", "{x", "ab{cd}ef{g}"} {
		for i := 0; i <= len(key); i++ {
			if got, want := hasHashTag(key[:i], key[i:]), whole(key); got != want {
				t.Errorf("hasHashTag(%q, %q) = %v, want %v (the rule on %q)", key[:i], key[i:], got, want, key)
			}
		}
	}
}

func TestKeysShareTheLockPrefix(t *testing.T) {
	k := KeysOf(LockKey("app:", "orders:42"))
	want := Keys{Lock: "app:{orders:42}", Fence: "app:{orders:42}:fence", Line: "app:{orders:42}:line", Seen: "app:{orders:42}:seen"}
	if k != want {
		t.Errorf("KeysOf = %+v, want %+v", k, want)
	}
	if got := len(k.All()); got != 4 {
		t.Errorf("len(All()) = %d, want 4", got)
	}
}

func TestLockOf(t *testing.T) {
	lock := LockKey("app:", "a:notice:b")
	tests := []struct {
		channel string
		want    string
		ok      bool
	}{
		{Channel(lock), lock, true},
		{Inbox(lock, "L1"), lock, true},
		{"app:other", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.channel, func(t *testing.T) {
			got, ok := LockOf(tt.channel)
			if got != tt.want || ok != tt.ok {
				t.Errorf("LockOf(%q) = %q, %v; want %q, %v", tt.channel, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestChannelSharesTheLockSlot: a lock's notice channel and inboxes hash
// as the lock does, tagged (lua_release, redlock), plain (the article
// techniques) or with braces but no tag, so a release can SPUBLISH on them
// in the lock's slot. LockOf reads each back. (The cluster package checks
// the slots against CLUSTER KEYSLOT.)
func TestChannelSharesTheLockSlot(t *testing.T) {
	tests := []struct {
		lock, want string
	}{
		{"lock:{orders:42}", "lock:{orders:42}:notice"},
		{"app:orders:{42}", "app:orders:{42}:notice"},
		{"lock:orders:42", "lock:orders:42:notice{lock:orders:42}"},
		{"lock:a{b", "{>080}:notice:lock:a{b"},
		{"lock:a}b", "{>0>0}:notice:lock:a}b"},
		{"a{}b", "{3991}:notice:a{}b"},
		{"{", "{0471}:notice:{"},
		{"}{", "{3>68}:notice:}{"},
		{"{0471}:notice:x", "{0471}:notice:x:notice"}, // a tagged key that looks like the third form
	}
	for _, tt := range tests {
		t.Run(tt.lock, func(t *testing.T) {
			ch := Channel(tt.lock)
			require.Equal(t, tt.want, ch, "Channel(%q)", tt.lock)
			inbox := Inbox(tt.lock, "L:1")
			assert.Equal(t, Slot(tt.lock), Slot(ch), "slot of Channel(%q) = %q", tt.lock, ch)
			assert.Equal(t, Slot(tt.lock), Slot(inbox), "slot of Inbox(%q) = %q", tt.lock, inbox)
			for _, c := range []string{ch, inbox} {
				got, ok := LockOf(c)
				assert.True(t, ok, "LockOf(%q) ok", c)
				assert.Equal(t, tt.lock, got, "LockOf(%q)", c)
			}
		})
	}
}

// TestTagForEverySlot: tagFor gives a brace-free tag in each of the 16384
// slots.
func TestTagForEverySlot(t *testing.T) {
	for slot := range Slots {
		tag := tagFor(slot)
		if !assert.NotContains(t, tag, "{") || !assert.NotContains(t, tag, "}") || !assert.Equal(t, slot, Slot(tag), "Slot(tagFor(%d) = %q)", slot, tag) {
			return
		}
	}
}

func TestSharded(t *testing.T) {
	src := `redis.call("PUBLISH", ch, m); redis.call("PUBSUB", "NUMSUB", ch)`
	want := `redis.call("SPUBLISH", ch, m); redis.call("PUBSUB", "SHARDNUMSUB", ch)`
	if got := Sharded(src); got != want {
		t.Errorf("Sharded(%q) = %q, want %q", src, got, want)
	}
}
