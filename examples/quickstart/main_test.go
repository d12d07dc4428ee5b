package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
)

// TestQuickStart runs the quick start against a Redis node the harness
// starts (`make example`).
func TestQuickStart(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	var out bytes.Buffer
	if err := run(context.Background(), node.Pool(), &out); err != nil {
		t.Fatalf("run() = %v, want nil", err)
	}
	t.Log("\n" + out.String())
	if got := out.String(); !strings.Contains(got, "holding orders:42") || !strings.HasSuffix(got, "released\n") {
		t.Errorf("quick start printed %q, want a hold and a release", got)
	}
}
