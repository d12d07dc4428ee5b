package line_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/line"
)

// TestReadRelease: each shape the release script (release.lua) replies reads into its fields,
// and any other reply is an error that shows it.
func TestReadRelease(t *testing.T) {
	tests := []struct {
		name  string
		reply any
		want  line.Released
		bad   bool
	}{
		{name: "not held", reply: int64(0), want: line.Released{}},
		{name: "released", reply: int64(1), want: line.Released{Held: true}},
		{name: "handed to the waiter", reply: []any{int64(12)}, want: line.Released{Held: true, Handed: 12}},
		{name: "other number", reply: int64(2), bad: true},
		{name: "empty array", reply: []any{}, bad: true},
		{name: "zero fence", reply: []any{int64(0)}, bad: true},
		{name: "two values", reply: []any{int64(1), int64(2)}, bad: true},
		{name: "a string", reply: []byte("OK"), bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := line.ReadRelease(tt.reply, nil)
			if tt.bad {
				require.Error(t, err, "line.ReadRelease(%v) = %+v, want an error", tt.reply, got)
				assert.Contains(t, err.Error(), "unexpected reply")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got, "line.ReadRelease(%v)", tt.reply)
		})
	}
	failed := errors.New("connection lost")
	_, err := line.ReadRelease(nil, failed)
	assert.ErrorIs(t, err, failed, "the call's error is returned as it is")
}
