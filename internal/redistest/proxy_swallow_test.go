package redistest

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProxySwallowReplies checks that SwallowReplies discards whole replies
// while the commands take effect, keeps the connection open, and leaves
// the stream in step: after Heal, the next command's reply is the first
// thing the client reads, well-formed. A proxy that dropped part of a reply
// or kept one would show here as a reply other than +PONG.
func TestProxySwallowReplies(t *testing.T) {
	t.Parallel()
	node := Start(t, 1)[0]
	p := NewProxy(t, node.Addr())
	c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
	require.NoError(t, err, "dial the proxy")
	t.Cleanup(func() { c.Close() })
	r := bufio.NewReader(c)
	readLine := func() string {
		t.Helper()
		require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
		line, err := r.ReadString('\n')
		require.NoError(t, err, "read a reply line")
		return line
	}
	_, err = c.Write([]byte("PING\r\n"))
	require.NoError(t, err)
	require.Equal(t, "+PONG\r\n", readLine(), "PING before the fault")

	p.SwallowReplies()
	assert.Equal(t, "swallow-replies", p.Mode())
	// A bulk reply whose body holds a CRLF, a status and an integer: each
	// is swallowed whole.
	mustDo(t, node, "SET", "body", "x\r\ny")
	_, err = c.Write([]byte("GET body\r\nSET k 1\r\nINCR n\r\n"))
	require.NoError(t, err)
	eventually(t, 5*time.Second, "the three replies swallowed", func() bool { return p.Swallowed() == 3 })
	v, ok := getString(t, node, "k")
	assert.True(t, ok && v == "1", "GET k on the node = %q (present %v), want \"1\": the SET whose reply was swallowed took effect", v, ok)
	v, _ = getString(t, node, "n")
	assert.Equal(t, "1", v, "GET n on the node: the INCR took effect")

	p.Heal()
	assert.Equal(t, "pass", p.Mode())
	_, err = c.Write([]byte("PING\r\n"))
	require.NoError(t, err, "the connection stays open through the fault")
	assert.Equal(t, "+PONG\r\n", readLine(), "first reply after Heal, want the PING's: nothing of the swallowed replies is left")
	assert.Equal(t, int64(3), p.Swallowed(), "Swallowed() after Heal")
}
