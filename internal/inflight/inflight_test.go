package inflight

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

type req struct {
	Entry
	id int
}

func (r *req) Tracking() *Entry { return &r.Entry }

func TestMap(t *testing.T) {
	var m Map[*req]
	a, b := &req{id: 1}, &req{id: 2}
	assert.Nil(t, m.Lookup("k"), "empty map: got a request, want nil")

	m.Track("k", a)
	assert.Same(t, a, m.Lookup("k"), "tracked a: Lookup got another")
	assert.Equal(t, "k", a.Name(), "a's name")

	m.Track("k", b) // a later request under the same name replaces a
	m.Finish(a)     // a finishing does not drop b
	assert.Same(t, b, m.Lookup("k"), "a finished after b replaced it: want b still tracked")

	m.Finish(b)
	assert.Nil(t, m.Lookup("k"), "b finished: got a request, want nil")

	c := &req{id: 3}
	m.Finish(c)
	m.Track("k", c)
	assert.Nil(t, m.Lookup("k"), "c finished before Track: got it tracked, want nil")
}
