package redisconn

import (
	"context"
	"errors"
	"fmt"
	"runtime"
)

// The Pipeline's writer: a caller queues its command and writes what is
// queued (send), up to maxWrites times before a goroutine of its own
// takes over (writeLoop), and a connection that fails or has drained is
// retired (stop, settle).

// maxWrites is how many writes a caller makes for the others before it
// leaves the writing to a goroutine of its own (writeLoop).
const maxWrites = 4

// send, called with p.mu held, queues c's command on the pipeline's
// connection (taking one from the pool, bounded by ctx, when there is
// none) and, unless a writer runs, writes it and whatever the callers
// queue meanwhile, in as few writes as they allow: commands queued while
// a write is under way go out together in the next. It releases p.mu. An
// error, wrapping ErrNotSent, means c was not queued (no connection);
// every other outcome, a failed write included, reaches c through its
// done channel.
func (p *Pipeline) send(ctx context.Context, c *pipeCall) error {
	if p.cur == nil || p.cur.broken {
		p.mu.Unlock()
		conn, err := Conn(ctx, p.pool)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotSent, err)
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
	if p.yields {
		// Yield once before the first write: callers that are ready to
		// run queue their commands meanwhile, and go out in the same write.
		p.mu.Unlock()
		runtime.Gosched()
		p.mu.Lock()
	}
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
// and writes them followed by a mark, whose id it notes on the write's
// last call (see ErrUnmatchedReply), and reports whether it should write
// again, with p.mu held. When nothing is queued, or s is broken (a command queued then
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
		c.mark = 0
		s.waiting = append(s.waiting, c)
		out = append(out, c.cmds[:c.size()]...)
		if !c.bounded {
			s.unbounded++
		} else if c.deadline.After(s.latest) {
			s.latest = c.deadline
		}
	}
	p.lastMark++
	batch[len(batch)-1].mark = p.lastMark
	if s.markArgs == nil {
		s.markArgs, p.markArgs = p.markArgs, nil
		if s.markArgs == nil {
			s.markArgs = p.newMarkArgs()
		}
	}
	p.setMark(s.markArgs, p.lastMark)
	out = append(out, Command{"ECHO", s.markArgs})
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

// ErrNotSent marks a Pipeline failure that came before a command was
// written, so the server cannot have run it: no connection could be had
// from the pool (the error wraps the pool's too). (A command whose turn
// on the shared connection never came, errBroken, is sent again alone,
// and reports what that attempt met.)
var ErrNotSent = errors.New("the command was not sent")

// errBroken is what a command gets that was queued on a connection whose
// write or read failed before its turn; do sends it again alone.
var errBroken = fmt.Errorf("%w: the pipeline's connection failed before its turn", ErrNotSent)

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
	if s.markArgs != nil {
		p.markArgs, s.markArgs = s.markArgs, nil
	}
	return true
}
