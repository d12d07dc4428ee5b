package redistest

import (
	"context"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// Getter is what Sweep needs of a pool (a strategy.Pool, a *redis.Pool).
type Getter interface {
	GetContext(ctx context.Context) (redis.Conn, error)
}

// sweepBatch is how many keys one SCAN step asks for and one UNLINK removes.
const sweepBatch = 500

// Sweep removes every key whose name starts with prefix from the server
// behind pool (SCAN MATCH, then UNLINK), so that a run on a user's server
// under a prefix of its own leaves nothing there. It returns how many keys
// it removed; on failure (ctx ended, the server refused), the count so far
// and the wrapped error. An empty prefix is refused: it would empty the
// server.
func Sweep(ctx context.Context, pool Getter, prefix string) (int, error) {
	if prefix == "" {
		return 0, fmt.Errorf("lockzoo: redistest: sweep: empty prefix")
	}
	c, err := pool.GetContext(ctx)
	if err != nil {
		return 0, fmt.Errorf("lockzoo: redistest: sweep %q: %w", prefix, err)
	}
	defer c.Close()
	pattern := globEscape(prefix) + "*"
	removed, cursor := 0, "0"
	for {
		reply, err := redis.Values(redis.DoContext(c, ctx, "SCAN", cursor, "MATCH", pattern, "COUNT", sweepBatch))
		if err != nil {
			return removed, fmt.Errorf("lockzoo: redistest: sweep %q: SCAN: %w", prefix, err)
		}
		var keys []string
		if _, err := redis.Scan(reply, &cursor, &keys); err != nil {
			return removed, fmt.Errorf("lockzoo: redistest: sweep %q: SCAN reply: %w", prefix, err)
		}
		if len(keys) > 0 {
			n, err := redis.Int(redis.DoContext(c, ctx, "UNLINK", redis.Args{}.AddFlat(keys)...))
			if err != nil {
				return removed, fmt.Errorf("lockzoo: redistest: sweep %q: UNLINK: %w", prefix, err)
			}
			removed += n
		}
		if cursor == "0" {
			return removed, nil
		}
	}
}

// globEscape escapes the characters SCAN MATCH reads as a pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
