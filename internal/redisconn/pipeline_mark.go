package redisconn

import (
	"bytes"
	"crypto/rand"
	"errors"
	"time"

	"github.com/gomodule/redigo/redis"
)

// ErrUnmatchedReply is what every command on a Pipeline's shared
// connection gets when a reply on it cannot be proved to answer the
// command it was read for (a reply was lost while the connection stayed
// open, so the ones after it would answer the wrong commands): the
// connection is dropped and each of its commands may or may not have run.
var ErrUnmatchedReply = errors.New("lockzoo: a reply on the shared connection did not match its command")

// Marks: the writer ends each write with one mark, ECHO of the
// Pipeline's prefix and an id that rises with each write, and the reader
// hands a write's replies to their callers only once the reply in the
// mark's place is that very string. A reply lost, or several, shifts every
// later one into the place of an earlier command, and so a different
// reply into the mark's place: no mark's string comes twice, and no
// command's reply carries the prefix (random per Pipeline).

// newMarkPrefix returns a Pipeline's mark prefix: "lz" and 12 random
// base32 characters (60 bits), short so that a mark's reply, which redigo
// allocates, stays small.
func newMarkPrefix() []byte {
	return []byte("lz" + rand.Text()[:12])
}

// markDigits is how many hexadecimal digits a mark's id is written
// with, zero-padded: every mark of a Pipeline has the same length, so that a
// stream writes all of its marks from one buffer (newMarkArgs), boxed
// once and passed on to the next stream when it settles.
const markDigits = 16

// newMarkArgs returns the arguments of a stream's marks: one buffer of
// the mark's length, which setMark fills before each write.
func (p *Pipeline) newMarkArgs() []any {
	buf := make([]byte, len(p.markPrefix)+markDigits)
	copy(buf, p.markPrefix)
	return []any{buf}
}

// hexDigits are the digits of a mark's id.
const hexDigits = "0123456789abcdef"

// setMark writes id into the buffer of args (newMarkArgs).
func (p *Pipeline) setMark(args []any, id uint64) {
	digits := args[0].([]byte)[len(p.markPrefix):]
	for i := len(digits) - 1; i >= 0; i-- {
		digits[i] = hexDigits[id&15]
		id >>= 4
	}
}

// isMark reports whether v, a reply read for a command, is a mark of p's:
// the reply of a mark in a command's place.
func (p *Pipeline) isMark(v any) bool {
	b, ok := v.([]byte)
	return ok && bytes.HasPrefix(b, p.markPrefix)
}

// isMarkOf reports whether v, the reply read in the place of mark id, is
// that mark's string.
func (p *Pipeline) isMarkOf(v any, id uint64) bool {
	b, ok := v.([]byte)
	if !ok || len(b) != len(p.markPrefix)+markDigits || !bytes.HasPrefix(b, p.markPrefix) {
		return false
	}
	digits := b[len(p.markPrefix):]
	for i := len(digits) - 1; i >= 0; i-- {
		if digits[i] != hexDigits[id&15] {
			return false
		}
		id >>= 4
	}
	return true
}

// spoil makes conn, whose replies are out of step with its commands,
// fail, so that closing it drops it rather than returning it to its pool
// (where redigo's Close would wait for the replies it thinks pending): it
// reads with no time left (a nanosecond, see ReceiveBy) until a read fails,
// which makes redigo mark the connection failed. A connection has at most
// as many replies on the way as commands and marks written to it, fewer
// than spoilReads. A connection without read deadlines
// (redis.ConnWithTimeout) is left as it is; a panic in it is dropped.
func spoil(conn redis.Conn) {
	defer func() { _ = recover() }()
	cwt, timed := conn.(redis.ConnWithTimeout)
	if !timed {
		return
	}
	for range spoilReads {
		if _, err := cwt.ReceiveWithTimeout(time.Nanosecond); err != nil {
			if _, refused := err.(redis.Error); !refused {
				return
			}
		}
	}
}

// spoilReads bounds spoil's and unmatched's reads: more than a connection's commands
// (two per call) and marks (one per write) can be.
const spoilReads = 4*MaxInFlight + 4

// unmatched ends s, whose replies are out of step with its commands, as
// fail does with err, for the reader: first it stops the writing and
// reads on until the reply of the last mark written comes, by the latest
// deadline of s's commands and within maxDrain, since Redis runs a
// connection's commands in order: every command written has then run, so
// that a caller that undoes a command failed here acts after it ran, not
// before. Then it spoils the connection so that closing it drops it.
func (p *Pipeline) unmatched(s *stream, err error) {
	p.mu.Lock()
	p.retire(s)
	last := s.waiting[len(s.waiting)-1].mark // the writer marks every write's last call before writing it
	latest, bounded := s.latest, s.unbounded == 0
	p.mu.Unlock()
	drain := time.Now().Add(maxDrain)
	if bounded && latest.Before(drain) {
		drain = latest
	}
	if cwt, timed := s.conn.(redis.ConnWithTimeout); timed {
		for range spoilReads {
			v, rerr := receive(cwt, drain, true)
			if _, refused := rerr.(redis.Error); rerr != nil && !refused {
				break
			}
			if p.isMarkOf(v, last) {
				break
			}
		}
	}
	spoil(s.conn)
	p.fail(s, err)
}

// maxDrain bounds how long unmatched reads on for the last mark's reply.
const maxDrain = time.Second
