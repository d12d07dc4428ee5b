package fencing

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/engine"
	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

// ErrStaleToken reports a write refused because the resource has already
// accepted a write with a higher fencing token.
var ErrStaleToken = errors.New("lockzoo: stale fencing token")

// name starts every error the package returns: "lockzoo: fencing: ...".
const name = "fencing"

//go:embed guard.lua
var guardSource string

// Resource is a value in Redis guarded by fencing tokens. It is safe for
// concurrent use.
type Resource struct {
	pool  strategy.Pool
	key   string
	guard *redis.Script
}

// NewResource returns the resource stored under key on the server behind
// pool. It returns an error wrapping strategy.ErrInvalidConfig when pool is
// nil or key is empty.
func NewResource(pool strategy.Pool, key string) (*Resource, error) {
	if err := engine.CheckPool(pool, "pool"); err != nil {
		return nil, lockerr.New(name, err)
	}
	if key == "" {
		return nil, lockerr.New(name, fmt.Errorf("%w: empty key", strategy.ErrInvalidConfig))
	}
	return &Resource{pool: pool, key: key, guard: redis.NewScript(1, guardSource)}, nil
}

// Write stores value if token is at least the highest token the resource
// has seen, atomically. It returns an error wrapping ErrStaleToken when a
// higher token was seen (nothing is written), and the wrapped Redis failure
// (matching ctx.Err() when ctx ended) otherwise.
func (r *Resource) Write(ctx context.Context, token uint64, value string) error {
	n, err := redis.Int(redisconn.Eval(ctx, r.pool, r.guard, r.key, strconv.FormatUint(token, 10), value))
	switch {
	case err != nil:
		return lockerr.Op(name, "write", r.key, err)
	case n == 0:
		return lockerr.Op(name, "write", r.key, fmt.Errorf("token %d: %w", token, ErrStaleToken))
	}
	return nil
}

// Read returns the resource's value and the token of the write that stored
// it; an empty value and token 0 when nothing was written yet.
func (r *Resource) Read(ctx context.Context) (value string, token uint64, err error) {
	vals, err := redis.Strings(redisconn.Do(ctx, r.pool, "HMGET", r.key, "value", "token"))
	if err != nil {
		return "", 0, lockerr.Op(name, "read", r.key, err)
	}
	if vals[1] != "" {
		if token, err = strconv.ParseUint(vals[1], 10, 64); err != nil {
			return "", 0, lockerr.Op(name, "read", r.key, fmt.Errorf("token %q: %w", vals[1], err))
		}
	}
	return vals[0], token, nil
}
