package cluster

import (
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
)

func TestKeyOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cmd   string
		args  []any
		key   string
		keyed bool
	}{
		{"a plain command", "GET", []any{"k"}, "k", true},
		{"a script's first key", "EVALSHA", []any{"sha", 2, "k1", "k2", "a"}, "k1", true},
		{"a script's key count as a string", "EVAL", []any{"src", "1", []byte("k")}, "k", true},
		{"a script without keys", "EVALSHA", []any{"sha", 0, "a"}, "", false},
		{"a shard channel", "SPUBLISH", []any{"ch", "m"}, "ch", true},
		{"MULTI", "MULTI", nil, "", false},
		{"ECHO", "ECHO", []any{"mark"}, "", false},
		{"PING without arguments", "PING", nil, "", false},
		{"a command without arguments", "DBSIZE", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, keyed := keyOf(tc.cmd, tc.args)
			assert.Equal(t, tc.keyed, keyed, "keyed")
			assert.Equal(t, tc.key, key, "key")
		})
	}
}

func TestParseRedirection(t *testing.T) {
	for _, tc := range []struct {
		reply string
		want  redirection
		ok    bool
	}{
		{"MOVED 3999 127.0.0.1:6381", redirection{"MOVED", 3999, "127.0.0.1:6381"}, true},
		{"ASK 3999 127.0.0.1:6381", redirection{"ASK", 3999, "127.0.0.1:6381"}, true},
		{"TRYAGAIN Multiple keys request during rehashing of slot", redirection{kind: "TRYAGAIN"}, true},
		{"CLUSTERDOWN The cluster is down", redirection{kind: "CLUSTERDOWN"}, true},
		{"MOVED 99999 127.0.0.1:6381", redirection{}, false},
		{"MOVED 1 :6381", redirection{"MOVED", 1, ":6381"}, true},
		{"ERR wrong number of arguments", redirection{}, false},
	} {
		t.Run(tc.reply, func(t *testing.T) {
			got, ok := parseRedirection(redis.Error(tc.reply))
			assert.Equal(t, tc.ok, ok, "ok")
			assert.Equal(t, tc.want, got, "redirection")
		})
	}
}

func TestWithHost(t *testing.T) {
	rd := redirection{kind: "MOVED", slot: 1, addr: ":6381"}
	assert.Equal(t, "10.0.0.5:6381", rd.withHost("10.0.0.5:6379").addr, "an unknown endpoint is the replying node's host")
	rd.addr = "10.0.0.6:6381"
	assert.Equal(t, "10.0.0.6:6381", rd.withHost("10.0.0.5:6379").addr, "a full address stays")
}

func TestUpper(t *testing.T) {
	assert.Equal(t, "EVALSHA", upper("evalsha"))
	assert.Equal(t, "GET", upper("GET"))
}
