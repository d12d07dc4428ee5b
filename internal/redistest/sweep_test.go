package redistest

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweep removes every key under a prefix, more than one SCAN step's
// worth, and nothing else: not a key that matches the prefix read as a
// glob pattern, not a key of another prefix.
func TestSweep(t *testing.T) {
	t.Parallel()
	node := Start(t, 1)[0]
	const prefix = "run[1]*:"
	mine := 3*sweepBatch + 7
	for i := range mine {
		_, err := node.Do("SET", fmt.Sprintf("%s%d", prefix, i), "v", "PX", 60000)
		require.NoError(t, err, "SET")
	}
	others := []string{"run1x:0", "runa:0", "other:0", "run[1]"}
	for _, k := range others {
		_, err := node.Do("SET", k, "v")
		require.NoError(t, err, "SET %s", k)
	}
	n, err := Sweep(context.Background(), node.Pool(), prefix)
	require.NoError(t, err, "Sweep(%q)", prefix)
	assert.Equal(t, mine, n, "keys Sweep removed")
	keys, err := redis.Strings(node.Do("KEYS", "*"))
	require.NoError(t, err, "KEYS *")
	assert.ElementsMatch(t, others, keys, "keys left after Sweep(%q)", prefix)

	_, err = Sweep(context.Background(), node.Pool(), "")
	assert.Error(t, err, "Sweep with an empty prefix must refuse, not empty the server")
}
