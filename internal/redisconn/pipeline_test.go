package redisconn_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// TestPipelineRepliesToEachCaller: under load the pipeline's commands
// share connections (fewer taken from the pool than commands sent), and
// every caller gets the reply to its own command.
func TestPipelineRepliesToEachCaller(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	pool := locktest.NewFaultyPool(node.Pool())
	p := redisconn.NewPipeline(pool)
	const callers, each = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := range callers {
		wg.Go(func() {
			for j := range each {
				want := fmt.Sprintf("%d/%d", i, j)
				got, err := redis.String(p.Do(context.Background(), "ECHO", []any{want}))
				if err != nil || got != want {
					errs <- fmt.Errorf("Do(ECHO %s) = %q, %v, want %q, nil", want, got, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if gets, sent := pool.Gets(), int64(callers*each); gets >= sent*9/10 {
		t.Errorf("pool connections taken = %d for %d commands, want fewer than %d (commands sharing connections)", gets, sent, sent*9/10)
	}
}

// occupy starts, n times one after the other, a blocking command (BLPOP
// on a key of its own for block) on p, a pipeline over node: the first
// goes alone on a connection of its own, so the later ones, and every
// command after them while it blocks, go on the pipeline's shared
// connection, behind the BLPOPs there. Each starts once node has the one
// before (waitReached). It returns a channel that yields each one's error
// once it returned.
func occupy(t *testing.T, node *redistest.Node, p *redisconn.Pipeline, n int, block time.Duration) <-chan error {
	t.Helper()
	require.LessOrEqual(t, n, 3, "occupy's BLPOPs: waitReached tells apart at most 3")
	done := make(chan error, n)
	var returned atomic.Int32
	for i := range n {
		go func() {
			_, err := p.Do(context.Background(), "BLPOP", []any{fmt.Sprintf("blocked:%d", i), block.Seconds()})
			returned.Add(1)
			done <- err
		}()
		waitReached(t, node, i+1, func() int { return int(returned.Load()) })
	}
	return done
}

// waitReached waits until node has n of occupy's BLPOPs: blocked on it,
// waiting in a blocked client's query buffer (the second on the shared
// connection, behind the first there), or returned (returned counts
// them), or fails the test after 10 s.
func waitReached(t *testing.T, node *redistest.Node, n int, returned func() int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		list, err := redis.String(node.Do("CLIENT", "LIST"))
		require.NoError(t, err, "CLIENT LIST")
		got := returned()
		for _, line := range strings.Split(list, "\n") {
			if !strings.Contains(line, " flags=b ") || !strings.Contains(line, " cmd=blpop ") {
				continue
			}
			got++ // blocked
			if !strings.Contains(line, " qbuf=0 ") {
				got++ // and the next behind it
			}
		}
		if got >= n {
			return
		}
		require.True(t, time.Now().Before(deadline), "node has %d of %d BLPOPs (blocked, queued behind one, or returned) after 10 s", got, n)
		time.Sleep(2 * time.Millisecond)
	}
}

// TestPipelineCallerLeaves: a caller whose ctx ends while its command
// awaits its reply returns at once with ctx's error, cancelled or timed
// out, and every later caller gets its own reply, not that one: a
// cancelled caller's reply is read and dropped (the commands behind it on
// the connection get theirs), and a deadline that passes ends the
// connection's read, the commands after it going on a new connection. A
// ctx that ended before the call sends nothing.
func TestPipelineCallerLeaves(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	tests := []struct {
		name  string
		leave func() (context.Context, context.CancelFunc)
		want  error
		// ended: the connection the caller left was closed (its read
		// failed once occupy's BLPOP returned), so the ECHOs go on a new one.
		ended bool
	}{
		{"timed out", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 100*time.Millisecond)
		}, context.DeadlineExceeded, true},
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := redisconn.NewPipeline(node.Pool())
			blocked := occupy(t, node, p, 1, time.Second)
			leaveCtx, cancel := tt.leave()
			defer cancel()
			start := time.Now()
			// The BLPOP blocks 20 times the ctx's 100 ms, so a caller that
			// waited for its reply is told apart on a loaded machine too.
			const blpop = 2 * time.Second
			reply, err := p.Do(leaveCtx, "BLPOP", []any{"leaves:blocked", blpop.Seconds()})
			if !errors.Is(err, tt.want) || reply != nil {
				t.Errorf("Do(BLPOP %v) with a ctx of 100 ms = %v, %v, want nil, %v", blpop, reply, err, tt.want)
			}
			assert.Less(t, time.Since(start), blpop, "Do(BLPOP %v) with a ctx of 100 ms returned that long after the call, want before the BLPOP ends", blpop)
			if tt.ended {
				// The server unblocks the left BLPOP when its connection
				// closes: then no client is blocked.
				require.Eventually(t, func() bool { return blockedClients(t, node) == 0 }, 10*time.Second, 5*time.Millisecond,
					"the connection of the timed-out BLPOP still open on the server")
			} else {
				time.Sleep(20 * time.Millisecond) // the ECHOs go behind the BLPOP, on its connection
			}
			for i := range 3 {
				want := fmt.Sprint("after-", i)
				if got, err := redis.String(p.Do(ctx, "ECHO", []any{want})); err != nil || got != want {
					t.Errorf("Do(ECHO %s) after a caller left = %q, %v, want %q, nil", want, got, err, want)
				}
			}
			if err := <-blocked; err != nil {
				t.Errorf("Do(BLPOP) = %v, want nil", err)
			}
		})
	}
	t.Run("ended before", func(t *testing.T) {
		p := redisconn.NewPipeline(node.Pool())
		ended, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := p.Do(ended, "SET", []any{"ended:marker", "sent"}); !errors.Is(err, context.Canceled) {
			t.Errorf("Do(SET) with an ended ctx = %v, want context.Canceled", err)
		}
		if n, err := redis.Int(node.Do("EXISTS", "ended:marker")); err != nil || n != 0 {
			t.Errorf("EXISTS of the key the SET names = %d, %v, want 0 (never sent)", n, err)
		}
	})
}

// TestPipelineConnectionFails: when the connections under way are killed,
// every caller whose command was on them gets an error (none waits for a
// reply that cannot come), and the next command is served.
func TestPipelineConnectionFails(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	p := redisconn.NewPipeline(node.Pool())
	blocked := occupy(t, node, p, 3, 5*time.Second)
	if _, err := node.Do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); err != nil {
		t.Fatalf("CLIENT KILL = %v, want nil", err)
	}
	for range 3 {
		select {
		case err := <-blocked:
			if err == nil {
				t.Errorf("Do(BLPOP) on a killed connection = nil, want an error")
			}
			// (The first was alone on a connection of its own; the other two
			// waited on the shared one, the second behind the first.)
		case <-time.After(4 * time.Second):
			t.Fatalf("Do(BLPOP) on a killed connection still waits after 4 s, want an error at once")
		}
	}
	if got, err := redis.String(p.Do(context.Background(), "ECHO", []any{"again"})); err != nil || got != "again" {
		t.Errorf("Do(ECHO) after the kill = %q, %v, want \"again\", nil", got, err)
	}
}

// TestPipelinePanickingPool: a connection that panics fails the commands
// of its batch with an error wrapping redisconn.ErrPanicked; it does not
// crash the process from the flight's goroutine.
func TestPipelinePanickingPool(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	pool := locktest.NewFaultyPool(node.Pool())
	p := redisconn.NewPipeline(pool)
	blocked := occupy(t, node, p, 1, 300*time.Millisecond) // took a healthy connection
	pool.Set(locktest.PoolPanics)
	_, err := p.Do(context.Background(), "ECHO", []any{"x"})
	if !errors.Is(err, redisconn.ErrPanicked) {
		t.Errorf("Do(ECHO) over a panicking connection = %v, want redisconn.ErrPanicked", err)
	}
	if err := <-blocked; err != nil {
		t.Errorf("Do(BLPOP) = %v, want nil", err)
	}
}

// TestPipelineDoTwo: DoTwo's two commands run one right after the other
// and each reply goes back in its place, an error reply in either place
// included, whether they go alone on a connection of their own or on the
// shared one, and whether the Pipeline reads by deadline or by context.
func TestPipelineDoTwo(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	tests := []struct {
		name   string
		pipe   func(redisconn.Pool) *redisconn.Pipeline
		shared bool
	}{
		{"alone", redisconn.NewPipeline, false},
		{"alone, by deadline", redisconn.NewDeadlinePipeline, false},
		{"shared", redisconn.NewPipeline, true},
		{"shared, by deadline", redisconn.NewDeadlinePipeline, true},
	}
	echo := func(s string) redisconn.Command { return redisconn.Command{Name: "ECHO", Args: []any{s}} }
	refused := redisconn.Command{Name: "NOSUCHCOMMAND"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.pipe(node.Pool())
			if tt.shared {
				blocked := occupy(t, node, p, 1, 200*time.Millisecond)
				t.Cleanup(func() { <-blocked })
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			r1, r2, err := p.DoTwo(ctx, echo("first"), refused)
			if got, _ := redis.String(r1.Value, r1.Err); err != nil || got != "first" || !isErrorReply(r2.Err) {
				t.Errorf("DoTwo(ECHO first, NOSUCHCOMMAND) = %+v, %+v, %v, want \"first\", an error reply, nil", r1, r2, err)
			}
			r1, r2, err = p.DoTwo(ctx, refused, echo("second"))
			if got, _ := redis.String(r2.Value, r2.Err); err != nil || got != "second" || !isErrorReply(r1.Err) {
				t.Errorf("DoTwo(NOSUCHCOMMAND, ECHO second) = %+v, %+v, %v, want an error reply, \"second\", nil", r1, r2, err)
			}
		})
	}
}

// isErrorReply reports whether err is an error reply of the server.
func isErrorReply(err error) bool {
	_, ok := err.(redis.Error)
	return ok
}

// TestPipelineNotSent: a command for which the pool gives no connection
// fails with an error wrapping redisconn.ErrNotSent (and the pool's), alone
// or as the first command of a shared connection, and the server never
// sees it.
func TestPipelineNotSent(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprint("shared=", shared), func(t *testing.T) {
			pool := locktest.NewFaultyPool(node.Pool())
			p := redisconn.NewPipeline(pool)
			if shared {
				// Alone on a connection of its own: the next caller finds
				// a command under way and no shared connection yet.
				blocked := occupy(t, node, p, 1, 200*time.Millisecond)
				t.Cleanup(func() { <-blocked })
			}
			pool.Set(locktest.PoolFails)
			_, err := p.Do(context.Background(), "SET", []any{"notsent:marker", "sent"})
			if !errors.Is(err, redisconn.ErrNotSent) || !errors.Is(err, locktest.ErrInjected) {
				t.Errorf("Do(SET) with a failing pool = %v, want %v and %v", err, redisconn.ErrNotSent, locktest.ErrInjected)
			}
			if n, err := redis.Int(node.Do("EXISTS", "notsent:marker")); err != nil || n != 0 {
				t.Errorf("EXISTS of the key the SET names = %d, %v, want 0 (never sent)", n, err)
			}
		})
	}
}

// TestPipelineRetriesWhatWasNotSent: a command queued on the shared
// connection behind a write that fails was never sent, so the caller does
// not get that connection's failure: it is sent again on a connection of
// its own, and its caller gets its reply. (lua_release's conformance
// suite failed so: an Unlock queued behind a background call's write on a
// connection taken while the pool's connections panicked returned "the
// pipeline's connection failed before its turn" once the pool was
// healthy again.) The command in the failed write gets the failure.
func TestPipelineRetriesWhatWasNotSent(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	release := make(chan struct{})
	stalled := make(chan struct{}, 1)
	pool := &stallingPool{pool: node.Pool(), stallGet: 2, release: release, stalled: stalled}
	p := redisconn.NewPipeline(pool)
	blocked := occupy(t, node, p, 1, 500*time.Millisecond) // alone on the pool's first connection
	failed := make(chan error, 1)
	go func() { // the shared connection's writer: its write stalls, then fails
		_, err := p.Do(context.Background(), "ECHO", []any{"in the failed write"})
		failed <- err
	}()
	<-stalled // the writer is in its write
	queued := make(chan error, 1)
	go func() { // queued behind that write
		got, err := redis.String(p.Do(context.Background(), "ECHO", []any{"queued"}))
		if err == nil && got != "queued" {
			err = fmt.Errorf("reply %q", got)
		}
		queued <- err
	}()
	// Nothing outside the pipeline shows the command queued; should it
	// come after the release, it goes on a new connection and the test
	// passes without the retry, so a slow machine cannot fail it.
	time.Sleep(50 * time.Millisecond)
	close(release)
	if err := <-failed; err == nil {
		t.Errorf("Do(ECHO) in the write that failed = nil, want its failure")
	}
	if err := <-queued; err != nil {
		t.Errorf("Do(ECHO queued) behind the write that failed = %v, want \"queued\", nil: it was never sent", err)
	}
	if err := <-blocked; err != nil {
		t.Errorf("Do(BLPOP) = %v, want nil", err)
	}
}

// stallingPool lends its pool's connections, but for the stallGet-th,
// whose write and read wait for release and then fail. A write that
// begins to wait sends on stalled, when it is not nil and has room.
type stallingPool struct {
	pool     redisconn.Pool
	stallGet int32
	gets     atomic.Int32
	release  <-chan struct{}
	stalled  chan<- struct{}
}

func (p *stallingPool) GetContext(ctx context.Context) (redis.Conn, error) {
	c, err := p.pool.GetContext(ctx)
	if err != nil || p.gets.Add(1) != p.stallGet {
		return c, err
	}
	return &stallingConn{Conn: c, release: p.release, stalled: p.stalled}, nil
}

// stallingConn is a connection whose commands never reach the server:
// its Flush and Receive wait for release and fail, as a connection that
// breaks in the middle of a write.
type stallingConn struct {
	redis.Conn
	release <-chan struct{}
	stalled chan<- struct{}
}

var errStalled = errors.New("stalled connection failed")

func (c *stallingConn) Send(string, ...any) error { return nil }

func (c *stallingConn) Flush() error {
	select {
	case c.stalled <- struct{}{}:
	default:
	}
	<-c.release
	return errStalled
}

func (c *stallingConn) Receive() (any, error) {
	<-c.release
	return nil, errStalled
}

// blockedClients returns the node's blocked_clients (INFO clients).
func blockedClients(t *testing.T, node *redistest.Node) int {
	t.Helper()
	info, err := redis.String(node.Do("INFO", "clients"))
	require.NoError(t, err, "INFO clients")
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "blocked_clients:"); ok {
			n, err := strconv.Atoi(v)
			require.NoError(t, err, "blocked_clients: %q", v)
			return n
		}
	}
	require.Fail(t, "INFO clients has no blocked_clients", info)
	return 0
}
