package peers_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/peers"
	"github.com/lockzoo/lockzoo/strategy"
)

// addrPool is a pool that knows its address (a wrong one, to tell it from
// what the server says).
type addrPool struct {
	strategy.Pool
	addr string
}

func (p addrPool) Addr() string { return p.addr }

// TestAddrOf: a pool's own Addr wins; otherwise the server says where it
// listens; a nil pool wraps ErrInvalidConfig.
func TestAddrOf(t *testing.T) {
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	tests := []struct {
		name string
		pool strategy.Pool
		want string
	}{
		{"asked", node.Pool(), node.Addr()},
		{"addresser", addrPool{node.Pool(), "example:1"}, "example:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := peers.AddrOf(ctx, tt.pool)
			if err != nil || got != tt.want {
				t.Errorf("AddrOf() = %q, %v; want %q, nil", got, err, tt.want)
			}
		})
	}
	if _, err := peers.AddrOf(ctx, nil); !errors.Is(err, strategy.ErrInvalidConfig) {
		t.Errorf("AddrOf(nil) = %v, want %v", err, strategy.ErrInvalidConfig)
	}
}
