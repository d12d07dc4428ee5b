package redisconn

import (
	"fmt"
	"runtime"
	"time"

	"github.com/gomodule/redigo/redis"
)

// read reads the replies of s's commands in order, both of a call with
// two at once, and hands out each write's replies once the reply in the
// place of the write's mark is that mark's string (see ErrUnmatchedReply):
// until then they are held. It goes on until no command awaits a reply
// even after it yielded the processor once more. When a read fails, or a
// reply proves a reply lost (a mark's string in a command's place, or
// anything else in a mark's), it fails every command left, those held
// included, and breaks s. It ends within the latest deadline of the
// commands written to s (see Pipeline), and returns the connection to the
// pool when the writer has stopped too (settle).
func (p *Pipeline) read(s *stream) {
	lingered := false
	held := 0 // s.waiting[:held] have their replies, and await their write's mark
	for {
		p.mu.Lock()
		if len(s.waiting) == 0 {
			if p.yields && !lingered {
				// Yield once before stopping: a caller about to send
				// then finds the connection still shared, rather than
				// going alone and the next one taking a new connection.
				lingered = true
				p.mu.Unlock()
				runtime.Gosched()
				continue
			}
			s.reading = false
			p.stop(s, nil, nil)
			return
		}
		lingered = false
		c := s.waiting[held] // a write ends with a marked call, so one awaits while some are held
		mark := c.mark
		latest, bounded := s.latest, s.unbounded == 0
		p.mu.Unlock()
		for i := range c.size() {
			r, err := reply(receive(s.conn, latest, bounded))
			if err == nil && p.isMark(r.Value) {
				p.unmatched(s, fmt.Errorf("%w: a mark's reply came in the place of a command's", ErrUnmatchedReply))
				return
			}
			if err != nil {
				p.fail(s, err)
				return
			}
			c.replies[i] = r
		}
		held++
		if mark == 0 {
			continue
		}
		r, err := reply(receive(s.conn, latest, bounded))
		if err != nil {
			p.fail(s, err)
			return
		}
		if !p.isMarkOf(r.Value, mark) {
			p.unmatched(s, fmt.Errorf("%w: the reply in the place of mark %d was not it", ErrUnmatchedReply, mark))
			return
		}
		p.mu.Lock()
		// The writer appends after s.waiting's end, so the calls before
		// its start are the reader's to hand out and clear.
		ready := s.waiting[:held:held]
		s.waiting = s.waiting[held:]
		held = 0
		for _, c := range ready {
			if !c.bounded {
				s.unbounded--
			}
		}
		p.mu.Unlock()
		for _, c := range ready {
			c.done <- struct{}{}
		}
		clear(ready)
	}
}

// fail ends s after a failed read: every command awaiting a reply gets
// err, nothing more is written to it, and it is closed (redigo marks it
// failed, so the pool drops it) once its writer, if one runs, stopped.
func (p *Pipeline) fail(s *stream, err error) {
	p.mu.Lock()
	p.retire(s)
	waiting := s.waiting
	s.waiting, s.unbounded = nil, 0
	s.reading = false
	p.stop(s, waiting, err)
}

// failAll hands err to every call in calls as its outcome.
func failAll(calls []*pipeCall, err error) {
	for _, c := range calls {
		c.replies, c.err = [2]Reply{}, err
		c.done <- struct{}{}
	}
}

// receive reads one reply from conn, by deadline when bounded and conn
// supports one (ReceiveBy), and turns a panic into an error wrapping
// ErrPanicked.
func receive(conn redis.Conn, deadline time.Time, bounded bool) (reply any, err error) {
	defer func() {
		if v := recover(); v != nil {
			reply, err = nil, fmt.Errorf("%w: %v", ErrPanicked, v)
		}
	}()
	if cwt, timed := conn.(redis.ConnWithTimeout); bounded && timed {
		return ReceiveBy(cwt, deadline)
	}
	return conn.Receive()
}
