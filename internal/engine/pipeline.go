package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/lockzoo/lockzoo/strategy"
)

// MaxInFlight is how many commands a Pipeline's connection carries
// without their replies at most; a caller that would exceed it sends its
// command on a connection of its own instead, so that a server that stops
// reading cannot fill the connection's buffers and block a write.
const MaxInFlight = 64

// Pipeline sends the commands that concurrent callers make to one Redis
// server over one shared connection. A caller queues its command and,
// unless another caller is writing, writes it together with every command
// queued while its write went out (one at a time, so a write carries
// whatever the others queued during the last); one reader, a goroutine
// that lives while commands await their replies, reads the replies in
// order and hands each to its caller. Redis then reads and answers many
// commands per system call instead of one, and so do the writer and the
// reader: under load those system calls are most of what a lock costs
// both of them (the README's compare-peers report has the figures). A
// caller that finds no other command of the pipeline under way, or
// MaxInFlight commands awaiting their replies, sends its own on a
// connection of its own (Do), as if there were no pipeline: a lone caller
// pays nothing for it. Use it for commands that do not block the
// connection (not BLPOP): the commands behind one wait for it.
//
// Each reply goes to the caller whose command it answers, an error reply
// as that caller's error (a redis.Error). A connection that fails fails
// every command that awaits a reply on it: each may or may not have run,
// as when a connection of one's own fails; the next command takes a new
// connection.
//
// Each caller is bounded by its ctx as DoContext bounds a command: it
// returns when ctx is cancelled or its deadline passes, and its reply,
// when it comes, is dropped. The reader reads each reply with the latest
// deadline of the commands on the connection (none while one of them has
// none, as Do has none), so it ends when the connection has no command
// left, fails, or outlives that deadline; a server that stalls past it
// fails every command on the connection, those whose own deadline is
// later included. A panic in the pool or the connection fails the
// commands concerned with an error wrapping ErrPanicked rather than
// crashing the process.
//
// The zero value is not usable; create one with NewPipeline. It is safe
// for concurrent use.
type Pipeline struct {
	pool  strategy.Pool
	calls sync.Pool // idle *pipeCall

	mu    sync.Mutex
	cur   *stream // the connection commands are written to; nil when none
	alone int     // commands sent on connections of their own, under way
}

// NewPipeline returns a Pipeline over the connections of pool.
func NewPipeline(pool strategy.Pool) *Pipeline {
	return &Pipeline{pool: pool}
}

// stream is the Pipeline's connection while commands await their replies
// on it. Its fields are guarded by Pipeline.mu. One writer at a time (a
// caller, see send) calls conn's Send and Flush, the reader alone its
// Receive, as redigo allows; whichever of them stops last while no
// command awaits a reply returns conn to the pool (settle).
type stream struct {
	conn      redis.Conn
	pending   []*pipeCall // queued for the writer, in order
	waiting   []*pipeCall // handed to the writer, in order, awaiting their replies
	spare     []*pipeCall // the writer's other batch buffer
	out       []command   // the writer's copy of the commands it writes
	latest    time.Time   // the latest deadline of a command written
	unbounded int         // commands in waiting without a deadline
	broken    bool        // a write or a read failed: write no more
	writing   bool        // a writer runs
	reading   bool        // the reader runs
}

// command is one command, its name and arguments. The writer writes
// from copies of its calls' commands (stream.out), since the reader may
// hand a call its outcome (a failed connection) while the writer still
// writes, and its caller then reuses the call.
type command struct {
	name string
	args []any
}

// pipeCall is one command in a Pipeline, from its caller to the reader
// and back. A caller that received its reply recycles it; one that left
// before does not, since the reader may still write it.
type pipeCall struct {
	command            // the command, copied by the writer as it writes
	deadline time.Time // zero: none
	bounded  bool      // its ctx has a deadline
	reply    any
	err      error
	done     chan struct{} // the reader sends once, when reply and err are set
	timer    *time.Timer   // the caller's deadline; nil until first needed
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
	if (p.cur == nil && p.alone == 0) || (p.cur != nil && len(p.cur.waiting)+len(p.cur.pending) >= MaxInFlight) {
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
	deadline, bounded := ctx.Deadline()
	c.command, c.deadline, c.bounded = command{cmd, args}, deadline, bounded
	if err := p.send(ctx, c); err != nil { // releases p.mu
		c.command = command{}
		p.calls.Put(c)
		return nil, err
	}
	var expired <-chan time.Time
	if bounded {
		d := time.Until(deadline)
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
		return nil, fmt.Errorf("%w: the command was sent, its reply is dropped", ctx.Err())
	case <-expired:
		return nil, fmt.Errorf("%w: the command was sent, its reply is dropped", context.DeadlineExceeded)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	reply, err := c.reply, c.err
	c.command, c.reply, c.err = command{}, nil, nil
	p.calls.Put(c)
	return reply, err
}

// maxWrites is how many writes a caller makes for the others before it
// leaves the writing to a goroutine of its own (writeLoop).
const maxWrites = 4

// send, called with p.mu held, queues c's command on the pipeline's
// connection (taking one from the pool, bounded by ctx, when there is
// none) and, unless a writer runs, writes it and whatever the callers
// queue meanwhile, in as few writes as they allow: commands queued while
// a write is under way go out together in the next. It releases p.mu. An
// error means c was not queued (no connection); every other outcome, a
// failed write included, reaches c through its done channel.
func (p *Pipeline) send(ctx context.Context, c *pipeCall) error {
	if p.cur == nil || p.cur.broken {
		p.mu.Unlock()
		conn, err := Conn(ctx, p.pool)
		if err != nil {
			return err
		}
		p.mu.Lock()
		if p.cur == nil || p.cur.broken {
			p.cur = &stream{conn: conn}
		} else {
			defer CloseQuietly(conn) // another caller's came first
		}
	}
	s := p.cur
	s.pending = append(s.pending, c)
	if s.writing {
		p.mu.Unlock()
		return nil
	}
	s.writing = true
	for range maxWrites {
		if !p.writeOnce(s) {
			return nil
		}
	}
	p.mu.Unlock()
	go p.writeLoop(s) // ends when nothing is left to write, see writeLoop
	return nil
}

// writeLoop is the writer of s after a caller made maxWrites writes: it
// writes until nothing is queued, then ends.
func (p *Pipeline) writeLoop(s *stream) {
	p.mu.Lock()
	for p.writeOnce(s) {
	}
}

// writeOnce is one write of s's writer, called with p.mu held: it hands
// every queued command to the reader (starting it when it does not run)
// and writes them, and reports whether it should write again, with p.mu
// held. When nothing is queued, or s is broken (a command queued then
// fails without being sent), it ends the writer, releases p.mu and
// reports false.
func (p *Pipeline) writeOnce(s *stream) bool {
	if len(s.pending) == 0 || s.broken {
		unsent := s.pending
		s.pending = nil
		s.writing = false
		p.stop(s, unsent, errBroken)
		return false
	}
	batch := s.pending
	s.pending = s.spare[:0]
	out := s.out[:0]
	for _, c := range batch {
		s.waiting = append(s.waiting, c)
		out = append(out, c.command)
		if !c.bounded {
			s.unbounded++
		} else if c.deadline.After(s.latest) {
			s.latest = c.deadline
		}
	}
	clear(batch)
	s.spare = batch
	if !s.reading {
		s.reading = true
		go p.read(s) // ends when s has no command left, see read
	}
	p.mu.Unlock()
	err := write(s.conn, out)
	clear(out)
	p.mu.Lock()
	s.out = out
	if err != nil {
		// The connection failed (redigo closes it), so the reader's read
		// fails too and fails the batch; nothing more goes out on it.
		p.retire(s)
	}
	return true
}

// retire, with p.mu held, marks s broken after a failed write or read:
// nothing more is written to it, and the next command takes a new
// connection.
func (p *Pipeline) retire(s *stream) {
	s.broken = true
	if p.cur == s {
		p.cur = nil
	}
}

// errBroken is what a command gets that was queued on a connection whose
// write or read failed before its turn: it was not sent.
var errBroken = errors.New("the pipeline's connection failed before the command was written")

// write sends cmds on conn and flushes them, turning a panic into an
// error wrapping ErrPanicked.
func write(conn redis.Conn, cmds []command) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %v", ErrPanicked, v)
		}
	}()
	for _, c := range cmds {
		if err := conn.Send(c.name, c.args...); err != nil {
			return err
		}
	}
	return conn.Flush()
}

// stop ends a writer or reader of s that has just marked itself stopped,
// with p.mu held: it releases p.mu, fails calls with err, and closes s's
// connection when s is done with (settle).
func (p *Pipeline) stop(s *stream, calls []*pipeCall, err error) {
	done := p.settle(s)
	p.mu.Unlock()
	failAll(calls, err)
	if done {
		CloseQuietly(s.conn)
	}
}

// settle, with p.mu held, reports whether s is done with: neither its
// writer nor its reader runs and no command awaits a reply; it is then no
// longer the pipeline's connection, and the caller closes it.
func (p *Pipeline) settle(s *stream) bool {
	if s.writing || s.reading || len(s.waiting) > 0 {
		return false
	}
	if p.cur == s {
		p.cur = nil
	}
	return true
}
