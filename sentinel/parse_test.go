package sentinel

import (
	"context"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
)

func TestParseSwitch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, msg string
		want      string
		ok        bool
	}{
		{"ours", "mymaster 127.0.0.1 7000 127.0.0.1 7001", "127.0.0.1:7001", true},
		{"ipv6", "mymaster ::1 7000 ::1 7001", "[::1]:7001", true},
		{"another master", "other 127.0.0.1 7000 127.0.0.1 7001", "", false},
		{"a name that starts with ours", "mymaster2 127.0.0.1 7000 127.0.0.1 7001", "", false},
		{"short", "mymaster 127.0.0.1 7000", "", false},
		{"empty", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseSwitch(tc.msg, "mymaster")
			assert.Equal(t, tc.ok, ok, "parseSwitch(%q) ok", tc.msg)
			assert.Equal(t, tc.want, got, "parseSwitch(%q)", tc.msg)
		})
	}
}

func TestReadOnlyMarksTargetSuspect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cmd     string
		reply   any
		err     error
		suspect bool
	}{
		{"a command's READONLY", "SET", nil, redis.Error("READONLY You can't write against a read only replica."), true},
		{"a script's READONLY", "EVALSHA", nil, redis.Error("READONLY You can't write against a read only replica. script: 1, on @user_script:1."), true},
		{"READONLY among flushed replies", "", []any{"OK", redis.Error("READONLY You can't write against a read only replica.")}, nil, true},
		{"another error", "SET", nil, redis.Error("ERR wrong number of arguments"), false},
		{"a value that says READONLY", "GET", "READONLY x", nil, false},
		{"a connection error", "SET", nil, errors.New("EOF"), false},
		{"a ctx error", "SET", nil, context.Canceled, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &conn{t: &target{}}
			c.watch(tc.cmd, tc.reply, tc.err)
			assert.Equal(t, tc.suspect, c.t.suspect.Load(), "suspect after %s replied %v, %v", tc.cmd, tc.reply, tc.err)
		})
	}
}
