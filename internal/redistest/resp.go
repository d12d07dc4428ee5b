package redistest

import "strconv"

// replyScanner follows the replies in a stream of bytes a Redis server
// sends (RESP2, and the RESP3 types), so that the proxy can drop whole
// replies. It keeps only what it needs across reads: the header line being
// read, the bulk bytes left, and the elements left in each open aggregate.
// Its zero value is at the start of a stream.
type replyScanner struct {
	// hdr holds the start of the header line being read; only its type
	// byte and length matter, so it keeps at most maxHeader bytes.
	hdr []byte
	// bulk is how many bytes of a bulk string's body and CRLF are left.
	bulk int
	// open holds, for each aggregate being read, the elements left.
	open []int
	// inReply is set from the first byte of a top-level reply to its last.
	inReply bool
	// drop is the fate of the current top-level reply.
	drop bool
}

// maxHeader bounds what replyScanner keeps of a header line: a type byte,
// a length of up to 20 digits and the CR.
const maxHeader = 24

// filter returns the bytes of b that belong to kept replies. At the first
// byte of each top-level reply it calls drop, which decides whether that
// whole reply is discarded. The returned slice is new; b is not kept.
func (s *replyScanner) filter(b []byte, drop func() bool) []byte {
	var out []byte
	for i := 0; i < len(b); {
		if !s.inReply {
			s.inReply, s.drop = true, drop()
		}
		keep := !s.drop // step may end the reply, not change its fate
		n := s.step(b[i:])
		if keep {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// step consumes bytes from the start of b up to the end of the current
// bulk body, header line or top-level reply, whichever comes first, and
// returns how many it consumed (at least one). When a top-level reply ends
// it clears inReply.
func (s *replyScanner) step(b []byte) int {
	if s.bulk > 0 {
		n := min(s.bulk, len(b))
		s.bulk -= n
		if s.bulk == 0 {
			s.elementDone()
		}
		return n
	}
	for i, c := range b {
		if c != '\n' {
			if len(s.hdr) < maxHeader {
				s.hdr = append(s.hdr, c)
			}
			continue
		}
		s.header()
		s.hdr = s.hdr[:0]
		return i + 1
	}
	return len(b)
}

// header acts on a complete header line (without its LF).
func (s *replyScanner) header() {
	if len(s.hdr) == 0 {
		s.elementDone() // not RESP; count the line as a reply
		return
	}
	num := func() int {
		digits := s.hdr[1:]
		if len(digits) > 0 && digits[len(digits)-1] == '\r' {
			digits = digits[:len(digits)-1]
		}
		n, err := strconv.Atoi(string(digits))
		if err != nil {
			return -1
		}
		return n
	}
	switch s.hdr[0] {
	case '$', '!', '=': // bulk string, bulk error, verbatim string
		if n := num(); n >= 0 {
			s.bulk = n + 2
			return
		}
	case '*', '~', '>': // array, set, push
		if n := num(); n > 0 {
			s.open = append(s.open, n)
			return
		}
	case '%', '|': // map, attribute: two elements per entry
		if n := num(); n > 0 {
			s.open = append(s.open, 2*n)
			return
		}
	}
	// Simple string, error, integer, null, double, boolean, big number,
	// or an empty or null aggregate or bulk: the element is complete.
	s.elementDone()
}

// elementDone records that one element ended, closing every aggregate it
// completes, and the top-level reply when none is left open.
func (s *replyScanner) elementDone() {
	for len(s.open) > 0 {
		top := len(s.open) - 1
		s.open[top]--
		if s.open[top] > 0 {
			return
		}
		s.open = s.open[:top]
	}
	s.inReply = false
}
