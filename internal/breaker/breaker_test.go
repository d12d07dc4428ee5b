package breaker

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBreakerProbesOneAtATime(t *testing.T) {
	var b Breaker
	ok, probe := b.Admit()
	require.True(t, ok, "a fresh breaker: got refused, want admitted")
	require.False(t, probe, "a fresh breaker: got a probe, want a plain call")

	lost := errors.New("read: i/o timeout")
	b.Settle(false, false, lost)
	require.True(t, b.Suspect(), "after a call without a reply: got not suspect, want suspect")

	ok, probe = b.Admit()
	require.True(t, ok && probe, "a suspect node: got ok %v probe %v, want the probe", ok, probe)
	ok, _ = b.Admit()
	require.False(t, ok, "a second call while the probe is in flight: got admitted, want skipped")
	assert.ErrorIs(t, b.Skipped(), lost, "the skip's error: got %v, want it to wrap the last failure", b.Skipped())

	b.Settle(true, true, nil)
	require.False(t, b.Suspect(), "after the probe replied: got suspect, want not")
	ok, probe = b.Admit()
	assert.True(t, ok && !probe, "after recovery: got ok %v probe %v, want a plain call", ok, probe)
}
