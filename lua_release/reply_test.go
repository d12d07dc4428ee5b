package luarelease

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadAcquire: each shape acquire.lua replies reads into its fields,
// and any other reply is an error that shows it.
func TestReadAcquire(t *testing.T) {
	tests := []struct {
		name  string
		reply any
		want  acquireReply
		bad   bool
	}{
		{name: "ours", reply: int64(7), want: acquireReply{took: true, fence: 7}},
		{name: "handed", reply: []any{int64(2), int64(9), int64(1500)}, want: acquireReply{handed: true, fence: 9, pttl: 1500}},
		{name: "handed with no counter", reply: []any{int64(2), int64(0), int64(5)}, want: acquireReply{handed: true, pttl: 5}},
		{name: "TryLock refused", reply: []any{int64(0), int64(300)}, want: acquireReply{pttl: 300}},
		{name: "Lock refused, listened", reply: []any{int64(0), int64(-2), int64(1), int64(41)}, want: acquireReply{pttl: -2, listened: true, counter: 41, counted: true}},
		{name: "Lock refused, no counter", reply: []any{int64(0), int64(300), int64(0), int64(-1)}, want: acquireReply{pttl: 300, counter: -1, counted: true}},
		{name: "zero", reply: int64(0), bad: true},
		{name: "handed without time left", reply: []any{int64(2), int64(9), int64(0)}, bad: true},
		{name: "unknown status", reply: []any{int64(3), int64(1)}, bad: true},
		{name: "too long", reply: []any{int64(0), int64(1), int64(0), int64(1), int64(5)}, bad: true},
		{name: "not a number", reply: []any{int64(0), []byte("x")}, bad: true},
		{name: "a string", reply: []byte("OK"), bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAcquire(tt.reply, nil)
			if tt.bad {
				require.Error(t, err, "readAcquire(%v) = %+v, want an error", tt.reply, got)
				assert.Contains(t, err.Error(), "unexpected reply")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got, "readAcquire(%v)", tt.reply)
		})
	}
	failed := errors.New("connection lost")
	_, err := readAcquire(nil, failed)
	assert.ErrorIs(t, err, failed, "the call's error is returned as it is")
}
