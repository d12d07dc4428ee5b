package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/strategy"
)

// MaxFlights is how many batches a Pipeline has on the wire at once, each
// on a connection of its own.
const MaxFlights = 4

// Pipeline sends the commands that concurrent callers make to one Redis
// server in batches. A caller queues its command and waits; a flight
// takes a connection from the pool, writes every command queued so far in
// one write, reads their replies in order and hands each to its caller,
// then takes the next batch, until the queue is empty. Up to MaxFlights
// flights run at once, so while batches are on the wire the next one
// gathers. Redis then reads and answers many commands per system call
// instead of one, and so does the client: under load that is most of what
// a lock costs both of them (see README, "Speed"). A caller that finds no
// other command of the pipeline under way sends its own on a connection
// of its own (Do), as if there were no pipeline: a lone caller pays
// nothing for it.
//
// A batch's commands travel on one connection, in the order they were
// queued; each reply goes to the caller whose command it answers, an
// error reply as that caller's error (a redis.Error). A connection that
// fails fails every command of its batch that has no reply yet: each may
// or may not have run, as when a connection of one's own fails.
//
// Each caller is bounded by its ctx as DoContext bounds a command: it
// returns when ctx is cancelled or its deadline passes, whether its
// command is still queued (it is then never sent) or on the wire. A
// flight reads with the latest deadline of its batch (none when a command
// in it has none, as Do has none), so it ends when every reply is read,
// the connection fails, or that deadline passes; a reply whose caller has
// gone is dropped, as a connection of one's own drops it when its read
// ends. A panic in the pool or the connection fails the batch with an
// error rather than the process.
//
// The zero value is not usable; create one with NewPipeline. It is safe
// for concurrent use.
type Pipeline struct {
	pool  strategy.Pool
	calls sync.Pool // idle *pipeCall

	mu      sync.Mutex
	queue   []*pipeCall   // commands waiting for a flight
	flights int           // flights running, at most MaxFlights
	spare   [][]*pipeCall // the batch buffers of flights that ended
	alone   int           // commands sent on connections of their own, under way
}

// NewPipeline returns a Pipeline over the connections of pool.
func NewPipeline(pool strategy.Pool) *Pipeline {
	return &Pipeline{pool: pool}
}

// The states of a pipeCall: queued until a flight takes it (sent) or its
// caller leaves first (abandoned).
const (
	callQueued int32 = iota
	callSent
	callAbandoned
)

// pipeCall is one command in a Pipeline, from its caller to a flight and
// back. A caller that received its reply recycles it; one that left
// before does not, since the flight may still write it.
type pipeCall struct {
	cmd      string
	args     []any
	deadline time.Time // zero: none
	state    atomic.Int32

	reply any
	err   error
	done  chan struct{} // the flight sends once, when reply and err are set
	timer *time.Timer   // the caller's deadline; nil until first needed
}

// Do runs one command through the pipeline, bounded by ctx, and returns
// its reply. An error reply is returned as its redis.Error; a failed
// connection as its error; a ctx that ended before the reply as ctx's
// error (context.DeadlineExceeded for a deadline that passed). A ctx that
// has already ended returns its error and sends nothing.
func (p *Pipeline) Do(ctx context.Context, cmd string, args []any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.flights == 0 && p.alone == 0 { // nothing under way: no batch to join
		p.alone++
		p.mu.Unlock()
		reply, err := Do(ctx, p.pool, cmd, args...)
		p.mu.Lock()
		p.alone--
		p.mu.Unlock()
		return reply, err
	}
	c, _ := p.calls.Get().(*pipeCall)
	if c == nil {
		c = &pipeCall{done: make(chan struct{}, 1)}
	}
	c.cmd, c.args = cmd, args
	c.deadline, _ = ctx.Deadline()
	c.state.Store(callQueued)
	p.queue = append(p.queue, c)
	start := p.flights < MaxFlights
	var batch []*pipeCall
	if start {
		p.flights++
		if n := len(p.spare); n > 0 {
			batch, p.spare = p.spare[n-1], p.spare[:n-1]
		}
	}
	p.mu.Unlock()
	if start {
		go p.fly(batch) // ends when the queue is empty, see fly
	}

	var expired <-chan time.Time
	if !c.deadline.IsZero() {
		d := time.Until(c.deadline)
		if c.timer == nil {
			c.timer = time.NewTimer(d)
		} else {
			c.timer.Reset(d)
		}
		expired = c.timer.C
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return nil, p.leave(c, ctx.Err())
	case <-expired:
		return nil, p.leave(c, context.DeadlineExceeded)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	reply, err := c.reply, c.err
	c.cmd, c.args, c.reply, c.err = "", nil, nil, nil
	p.calls.Put(c)
	return reply, err
}

// leave is Do's caller giving up on c with err: a command still queued is
// never sent. c is not recycled.
func (p *Pipeline) leave(c *pipeCall, err error) error {
	if !c.state.CompareAndSwap(callQueued, callAbandoned) {
		return fmt.Errorf("%w: the command was sent, its reply is dropped", err)
	}
	return err
}

// fly runs batches until the queue is empty, then ends, leaving its batch
// buffer (batch, swapped with the queue) for the next flight; Do starts
// it when fewer than MaxFlights run. Each batch ends within its latest
// deadline (see run), so a flight ends once its callers stop queueing
// commands.
func (p *Pipeline) fly(batch []*pipeCall) {
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			p.flights--
			p.spare = append(p.spare, batch[:0])
			p.mu.Unlock()
			return
		}
		batch, p.queue = p.queue, batch[:0]
		p.mu.Unlock()
		p.run(batch)
		clear(batch)
	}
}

// run sends the batch's commands whose callers still wait on one
// connection and hands out the replies.
func (p *Pipeline) run(batch []*pipeCall) {
	sent := batch[:0]
	var latest time.Time
	bounded := true
	for _, c := range batch {
		if !c.state.CompareAndSwap(callQueued, callSent) {
			continue // its caller left: never sent
		}
		sent = append(sent, c)
		if c.deadline.IsZero() {
			bounded = false
		} else if c.deadline.After(latest) {
			latest = c.deadline
		}
	}
	if len(sent) == 0 {
		return
	}
	answered := 0
	defer func() {
		if v := recover(); v != nil {
			fail(sent[answered:], fmt.Errorf("%w: %v", ErrPanicked, v))
		}
	}()
	ctx := context.Background()
	if bounded {
		ctx = deadlineCtx{ctx, latest}
	}
	conn, err := Conn(ctx, p.pool)
	if err != nil {
		fail(sent, err)
		return
	}
	defer closeQuietly(conn)
	for _, c := range sent {
		if err := conn.Send(c.cmd, c.args...); err != nil {
			fail(sent, err)
			return
		}
	}
	if err := conn.Flush(); err != nil {
		fail(sent, err)
		return
	}
	for _, c := range sent {
		reply, err := receive(conn, latest, bounded)
		if err != nil {
			if _, refused := err.(redis.Error); !refused {
				fail(sent[answered:], err) // the connection failed: no more replies
				return
			}
		}
		answered++
		c.reply, c.err = reply, err
		c.done <- struct{}{}
	}
}

// ErrPanicked marks a failure that was a panic in a Pool or connection,
// recovered so that it cannot crash the process from a goroutine of
// lockzoo's.
var ErrPanicked = errors.New("lockzoo: the pool or connection panicked")

// fail hands err to every call in calls.
func fail(calls []*pipeCall, err error) {
	for _, c := range calls {
		c.reply, c.err = nil, err
		c.done <- struct{}{}
	}
}

// closeQuietly returns conn to its pool, dropping a panic in its Close.
func closeQuietly(conn redis.Conn) {
	defer func() { _ = recover() }()
	conn.Close()
}

// receive reads one reply from conn, with a read deadline when bounded
// and conn supports one (redis.ConnWithTimeout); a deadline that passes is
// reported as context.DeadlineExceeded.
func receive(conn redis.Conn, deadline time.Time, bounded bool) (any, error) {
	cwt, timed := conn.(redis.ConnWithTimeout)
	if !bounded || !timed {
		return conn.Receive()
	}
	// 0 would mean no deadline at all: a deadline passed still leaves the
	// read a nanosecond, so the connection fails rather than waits.
	reply, err := cwt.ReceiveWithTimeout(max(time.Until(deadline), time.Nanosecond))
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return reply, err
}
