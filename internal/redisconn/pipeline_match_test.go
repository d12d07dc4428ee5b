package redisconn_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/internal/redistest"
)

// TestPipelineSwallowedReplyReachesNoOtherCaller: concurrent callers send
// ECHO of strings of their own through one Pipeline behind a proxy that
// swallows a reply now and then while the connection stays open. No
// caller ever gets a reply that is not its own: a caller whose reply, or
// whose turn on the connection, a swallowed reply spoils fails with an
// error that says the command may have run (not ErrNotSent), and the
// Pipeline goes on with a new connection.
func TestPipelineSwallowedReplyReachesNoOtherCaller(t *testing.T) {
	for _, kind := range []struct {
		name string
		new  func(*redistest.Proxy) *redisconn.Pipeline
	}{
		{"NewPipeline", func(p *redistest.Proxy) *redisconn.Pipeline { return redisconn.NewPipeline(p.Pool()) }},
		{"NewDeadlinePipeline", func(p *redistest.Proxy) *redisconn.Pipeline { return redisconn.NewDeadlinePipeline(p.Pool()) }},
	} {
		t.Run(kind.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			node := redistest.Start(t, 1)[0]
			proxy := redistest.NewProxy(t, node.Addr())
			p := kind.new(proxy)
			const callers, drops = 16, 5
			var (
				replies atomic.Int64 // right replies so far
				calls   atomic.Int64 // calls returned so far, whatever they got
				stop    atomic.Bool
				wg      sync.WaitGroup
				mu      sync.Mutex
				wrong   []string // replies handed to the wrong caller
				failed  []error  // callers' errors
			)
			for i := range callers {
				wg.Go(func() {
					for j := 0; !stop.Load(); j++ {
						want := fmt.Sprintf("caller-%d/%d", i, j)
						ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
						got, err := redis.String(p.Do(ctx, "ECHO", []any{want}))
						cancel()
						mu.Lock()
						switch {
						case err != nil:
							failed = append(failed, err)
						case got != want:
							wrong = append(wrong, fmt.Sprintf("ECHO %s got %q", want, got))
						default:
							replies.Add(1)
						}
						mu.Unlock()
						calls.Add(1)
					}
				})
			}
			// Each drop waits for the proxy to swallow a reply, then for
			// 200 more calls, so that traffic follows every drop.
			waitFor := func(what string, cond func() bool) {
				t.Helper()
				require.Eventually(t, cond, 20*time.Second, time.Millisecond, "waiting for %s", what)
			}
			for range drops {
				proxy.DropNextReplies(1)
				waitFor("the proxy to swallow a reply", func() bool { return proxy.Mode() == "pass" })
				after := calls.Load() + 200
				waitFor("200 calls after the swallowed reply", func() bool { return calls.Load() >= after })
			}
			stop.Store(true)
			wg.Wait()
			assert.Empty(t, wrong[:min(len(wrong), 5)], "replies handed to a caller whose command they do not answer (%d of them, the first 5 shown; %d right ones)", len(wrong), replies.Load())
			assert.NotEmpty(t, failed, "callers' errors after %d swallowed replies, want at least one", drops)
			unmatched := 0
			for _, err := range failed {
				assert.False(t, errors.Is(err, redisconn.ErrNotSent), "a caller's error = %v, want one that may have run (not ErrNotSent)", err)
				if errors.Is(err, redisconn.ErrUnmatchedReply) {
					unmatched++
				} else {
					t.Logf("a caller's error: %v", err)
				}
			}
			t.Logf("%d right replies, %d errors, %d of them %v", replies.Load(), len(failed), unmatched, redisconn.ErrUnmatchedReply)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			got, err := redis.String(p.Do(ctx, "ECHO", []any{"healed"}))
			assert.NoError(t, err, "Do(ECHO healed) after the drops")
			assert.Equal(t, "healed", got, "Do(ECHO healed) after the drops")
		})
	}
}
