package redistest

import (
	"strings"
	"testing"
)

func TestReplyScanner(t *testing.T) {
	t.Parallel()
	// Each reply of a stream, as a server sends them back to back.
	replies := []string{
		"+OK\r\n",
		"-ERR no such key\r\n",
		":42\r\n",
		"$5\r\nhe\r\nl\r\n", // a bulk string holding CRLF
		"$-1\r\n",
		"$0\r\n\r\n",
		"*-1\r\n",
		"*0\r\n",
		"*3\r\n$1\r\na\r\n*2\r\n:1\r\n$-1\r\n+x\r\n", // nested
		"%1\r\n+k\r\n*1\r\n:2\r\n",                   // RESP3 map
		"_\r\n",
		">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$0\r\n\r\n", // a pub/sub push
		"$12\r\n" + strings.Repeat("x", 12) + "\r\n",
	}
	stream := strings.Join(replies, "")
	tests := []struct {
		name string
		drop func(i int) bool // whether the i-th reply is dropped
	}{
		{"none", func(int) bool { return false }},
		{"all", func(int) bool { return true }},
		{"first", func(i int) bool { return i == 0 }},
		{"odd", func(i int) bool { return i%2 == 1 }},
		{"nested and bulk", func(i int) bool { return i == 3 || i == 8 || i == 9 }},
	}
	for _, tc := range tests {
		var want strings.Builder
		for i, r := range replies {
			if !tc.drop(i) {
				want.WriteString(r)
			}
		}
		// The same stream read in pieces of every size from 1 byte to all.
		for size := 1; size <= len(stream); size++ {
			var s replyScanner
			var got []byte
			next := 0
			claim := func() bool { next++; return tc.drop(next - 1) }
			for i := 0; i < len(stream); i += size {
				got = append(got, s.filter([]byte(stream[i:min(i+size, len(stream))]), claim)...)
			}
			if string(got) != want.String() || next != len(replies) {
				t.Fatalf("%s, reads of %d bytes: kept %q after %d replies; want %q after %d",
					tc.name, size, got, next, want.String(), len(replies))
			}
		}
	}
}
