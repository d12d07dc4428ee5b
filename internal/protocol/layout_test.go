package protocol

import "testing"

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
	}
	for _, tt := range tests {
		t.Run(tt.prefix+tt.name, func(t *testing.T) {
			if got := LockKey(tt.prefix, tt.name); got != tt.want {
				t.Errorf("LockKey(%q, %q) = %q, want %q", tt.prefix, tt.name, got, tt.want)
			}
		})
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
