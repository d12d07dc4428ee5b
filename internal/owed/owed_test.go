package owed

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/background"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// node is a fake node: each call is answered with the next of replies
// ("ok", "lost", "skip"), then "ok".
type node struct {
	mu      sync.Mutex
	replies []string
	paid    []string
}

func (n *node) call(name string) Call {
	return func(context.Context) (sent, lost bool) {
		n.mu.Lock()
		defer n.mu.Unlock()
		r := "ok"
		if len(n.replies) > 0 {
			r, n.replies = n.replies[0], n.replies[1:]
		}
		switch r {
		case "skip":
			return false, false
		case "lost":
			return true, true
		}
		n.paid = append(n.paid, name)
		return true, false
	}
}

func TestPayerPays(t *testing.T) {
	tests := []struct {
		name    string
		replies []string
		want    []string
	}{
		{"paid at once, in order", nil, []string{"a", "b"}},
		{"a skipped, then paid in order", []string{"skip", "skip"}, []string{"a", "b"}},
		{"a lost its reply once", []string{"lost"}, []string{"a", "b"}},
		{"a lost its reply on every try: dropped", []string{"lost", "lost", "lost", "lost", "lost"}, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var bg background.Tracker
			p := &Payer{Timeout: time.Second, Closing: make(chan struct{}), BG: &bg}
			n := &node{replies: tt.replies}
			var q Queue
			until := time.Now().Add(time.Hour)
			p.Owe(&q, n.call("a"), until)
			p.Owe(&q, n.call("b"), until)
			require.NoError(t, bg.Wait(context.Background()))
			assert.Equal(t, tt.want, n.paid, "paid: got %v, want %v", n.paid, tt.want)
		})
	}
}

func TestPayerDropsExpiredAndStopsOnClose(t *testing.T) {
	var bg background.Tracker
	closing := make(chan struct{})
	p := &Payer{Timeout: time.Second, Closing: closing, BG: &bg}
	n := &node{}
	var q Queue
	p.Owe(&q, n.call("expired"), time.Now().Add(-time.Second))
	require.NoError(t, bg.Wait(context.Background()))
	assert.Empty(t, n.paid, "an expired call: got %v paid, want nothing", n.paid)

	close(closing)
	q.Suspect = func() bool { return true }
	n.replies = []string{"skip"}
	p.Owe(&q, n.call("to a suspect node"), time.Now().Add(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, bg.Wait(ctx), "closing with a suspect node: want the payer to end")
	assert.Empty(t, n.paid, "closing, suspect node: got %v paid, want nothing sent", n.paid)
}
