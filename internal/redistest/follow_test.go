package redistest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFollow: a failover by hand. The primary dies; the replica with the
// higher offset is promoted, the other follows it (REPLICAOF) and gets
// what is written there, and WAIT on the promoted one counts it
// (AwaitAcks); the old primary comes back and follows too.
func TestFollow(t *testing.T) {
	t.Parallel()
	primary := Start(t, 1)[0]
	a, b := primary.StartReplica(), primary.StartReplica()
	primary.AwaitAcks(2)
	mustDo(t, primary, "SET", "before", "1")
	waitKey(t, a, "before", "1")
	waitKey(t, b, "before", "1")
	oa, err := a.ReplOffset()
	if err != nil || oa <= 0 {
		t.Fatalf("ReplOffset of a replica = %d, %v; want > 0", oa, err)
	}

	primary.Kill()
	a.Promote()
	b.Follow(a)
	primary.Restart()
	primary.Follow(a)
	a.AwaitAcks(2)
	mustDo(t, a, "SET", "after", "2")
	waitKey(t, b, "after", "2")
	waitKey(t, primary, "after", "2")
	if v, _ := getString(t, primary, "before"); v != "1" {
		t.Errorf("the old primary, following the promoted replica: GET before = %q, want \"1\"", v)
	}
}

// TestAdopt: the promoted replica takes the other two at once, and WAIT
// on it counts both.
func TestAdopt(t *testing.T) {
	t.Parallel()
	primary, replicas := StartReplicated(t, 3)
	primary.Kill()
	promoted := replicas[0]
	promoted.Promote()
	promoted.Adopt(replicas[1:]...)
	promoted.AwaitAcks(2)
	mustDo(t, promoted, "SET", "after", "1")
	for _, r := range replicas[1:] {
		waitKey(t, r, "after", "1")
		role, err := Role(r)
		require.NoError(t, err)
		assert.Equal(t, "slave", role, "ROLE of %s after Adopt", r.Addr())
	}
}
