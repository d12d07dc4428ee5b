package engine

import (
	"fmt"
	"runtime"
	"time"

	"github.com/gomodule/redigo/redis"
)

// read hands out the replies of s's commands in order, both of a call
// with two at once, until none awaits one even after it yielded the
// processor once more; when a read fails it fails every command left and
// breaks s. It ends within the latest deadline of the commands written to
// s (see Pipeline), and returns the connection to the pool when the
// writer has stopped too (settle).
func (p *Pipeline) read(s *stream) {
	lingered := false
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
		c := s.waiting[0]
		latest, bounded := s.latest, s.unbounded == 0
		p.mu.Unlock()
		var replies [2]Reply
		for i := range c.size() {
			r, err := reply(receive(s.conn, latest, bounded))
			if err != nil {
				p.fail(s, err)
				return
			}
			replies[i] = r
		}
		p.mu.Lock()
		s.waiting[0] = nil
		s.waiting = s.waiting[1:]
		if !c.bounded {
			s.unbounded--
		}
		p.mu.Unlock()
		c.replies = replies
		c.done <- struct{}{}
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
