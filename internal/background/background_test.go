package background

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTrackerWait(t *testing.T) {
	var b Tracker
	require.NoError(t, b.Wait(context.Background()), "an idle tracker: got an error, want nil")

	b.Add(2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, b.Wait(ctx), context.Canceled, "2 running, ctx ended: want ctx's error")

	release := make(chan struct{})
	for range 2 {
		go func() {
			defer b.Done()
			<-release
		}()
	}
	close(release)
	require.NoError(t, b.Wait(context.Background()), "both ended: got an error, want nil")

	b.Add(0)
	require.NoError(t, b.Wait(ctx), "Add(0) on an idle tracker: want it still idle")
}
