package recent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSetForgetsPastHorizon(t *testing.T) {
	var s Set
	t0 := time.Unix(1000, 0)
	const horizon = time.Second
	assert.False(t, s.Has("a"), "empty set: got a, want nothing")

	s.Add("a", t0, horizon)
	s.Add("b", t0.Add(500*time.Millisecond), horizon)
	s.Add("a", t0.Add(900*time.Millisecond), horizon) // keeps its first time
	assert.True(t, s.Has("a"), "a added: got missing, want it")
	assert.True(t, s.Has("b"), "b added: got missing, want it")

	s.Add("c", t0.Add(1200*time.Millisecond), horizon)
	assert.False(t, s.Has("a"), "a added 1.2s ago (horizon 1s): got it, want forgotten")
	assert.True(t, s.Has("b"), "b added 0.7s ago: got missing, want it")
	assert.True(t, s.Has("c"), "c just added: got missing, want it")
}
