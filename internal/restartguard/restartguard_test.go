package restartguard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRunID(t *testing.T) {
	info := "# Server\r\nredis_version:7.0.15\r\nrun_id:0123abcd\r\ntcp_port:6379\r\n"
	assert.Equal(t, "0123abcd", runID(info), "runID() of an INFO with run_id")
	assert.Equal(t, "", runID("# Server\r\nredis_version:7.0.15\r\n"), "runID() without the field: want empty")
}

func TestSawExcludesARestart(t *testing.T) {
	g := New(func() time.Duration { return time.Hour })
	var n Node
	assert.False(t, n.saw("a", g.now(), time.Hour), "first run_id: got a restart, want none")
	assert.False(t, g.Excluded(&n), "first run_id: got excluded, want counted")
	assert.False(t, n.saw("a", g.now(), time.Hour), "same run_id: got a restart, want none")
	assert.True(t, n.saw("b", g.now(), time.Hour), "new run_id: got no restart, want one")
	assert.True(t, g.Excluded(&n), "after a restart, within the hold: got counted, want excluded")
}
