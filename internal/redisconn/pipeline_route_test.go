package redisconn

import "testing"

func TestCommandKey(t *testing.T) {
	tests := []struct {
		name  string
		c     Command
		key   string
		keyed bool
	}{
		{"a script's first key", Command{"EVALSHA", []any{"sha", 4, "k", "f", "l", "s", "tok"}}, "k", true},
		{"a script without keys", Command{"EVALSHA", []any{"sha", 0, "a"}}, "", false},
		{"a key count as a string", Command{"eval", []any{"src", "1", "k"}}, "k", true},
		{"a plain command", Command{"GET", []any{"k"}}, "k", true},
		{"CLIENT GETNAME", Command{"CLIENT", []any{"GETNAME"}}, "", false},
		{"a mark", Command{"ECHO", []any{"m"}}, "", false},
		{"no arguments", Command{"PING", nil}, "", false},
		{"none", Command{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, keyed := commandKey(tt.c)
			if key != tt.key || keyed != tt.keyed {
				t.Errorf("commandKey(%v) = %q, %v; want %q, %v", tt.c, key, keyed, tt.key, tt.keyed)
			}
		})
	}
}
