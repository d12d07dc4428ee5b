package redistest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redisinfo"
)

// Timeouts for talking to a node.
const (
	// doTimeout bounds Node.Do: dialing, writing and reading together.
	doTimeout = 2 * time.Second
	// readyTimeout bounds the wait for a started server to be ready. A
	// server starts in well under a second; the bound is for a machine
	// whose load starves the test and the server alike (seen: 5 s ran out
	// at load average 20).
	readyTimeout = 30 * time.Second
	// readyPoll is the pause between two probes while waiting.
	readyPoll = 10 * time.Millisecond
	// probeTimeout bounds one command of a probe while waiting.
	probeTimeout = time.Second
)

// errStaleConn is what the pool's TestOnBorrow returns for a connection that
// was last used before the node was killed.
var errStaleConn = errors.New("redistest: connection predates the node's last Kill")

// newPool returns the pool of a node at addr. A connection last used before
// killedAt() is discarded on borrow: it points at a dead server. Pause does
// not change killedAt, so frozen connections stay in the pool.
// Each connection is dialed with dial's options after the connect timeout.
func newPool(addr string, killedAt func() time.Time, dial ...redis.DialOption) *redis.Pool {
	opts := append([]redis.DialOption{redis.DialConnectTimeout(time.Second)}, dial...)
	return &redis.Pool{
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", addr, opts...)
		},
		TestOnBorrow: func(_ redis.Conn, lastUsed time.Time) error {
			if lastUsed.Before(killedAt()) {
				return errStaleConn
			}
			return nil
		},
		MaxIdle:     256,
		MaxActive:   0,
		IdleTimeout: time.Minute,
		Wait:        false,
	}
}

// do sends one command to addr on a new connection and closes it; ctx bounds
// the whole exchange. A reply error is returned as the redis.Error it is.
func do(ctx context.Context, addr, cmd string, args ...any) (any, error) {
	c, err := redis.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("redistest: dial %s: %w", addr, err)
	}
	defer c.Close()
	return redis.DoContext(c, ctx, cmd, args...)
}

// doTimed is do bounded by timeout.
func doTimed(timeout time.Duration, addr, cmd string, args ...any) (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return do(ctx, addr, cmd, args...)
}

// waitReady polls addr, for at most timeout, until the server there is
// the one started (INFO server names pid as its process_id; any pid when
// pid is 0) and it serves commands (PING answers PONG, which it does not
// while loading its data). Between polls it asks alive, which returns an
// error once the server can no longer come up (its process exited, say);
// waitReady then gives up at once.
func waitReady(addr string, timeout time.Duration, alive func() error, pid int) error {
	deadline := time.Now().Add(timeout)
	for {
		err := probeReady(addr, pid)
		if err == nil {
			return nil
		}
		if aerr := alive(); aerr != nil {
			return fmt.Errorf("%w (last probe: %v)", aerr, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %v: %w", addr, timeout, err)
		}
		time.Sleep(readyPoll)
	}
}

// probeReady returns nil when the server at addr has process_id pid (any
// when pid is 0) and answers PING with PONG.
func probeReady(addr string, pid int) error {
	info, err := redis.String(doTimed(probeTimeout, addr, "INFO", "server"))
	if err != nil {
		return fmt.Errorf("INFO server: %w", err)
	}
	if got := redisinfo.Fields(info)["process_id"]; pid != 0 && got != strconv.Itoa(pid) {
		return fmt.Errorf("INFO server names process_id %q, want %d: another server holds the port", got, pid)
	}
	reply, err := redis.String(doTimed(probeTimeout, addr, "PING"))
	if err != nil {
		return fmt.Errorf("PING: %w", err)
	}
	if reply != "PONG" {
		return fmt.Errorf("PING answered %q", reply)
	}
	return nil
}

// waitSynced polls INFO replication of the replica at addr until its master
// link is up and no sync is in progress.
func waitSynced(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		info, err := redis.String(doTimed(probeTimeout, addr, "INFO", "replication"))
		if err == nil && synced(info) {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("not in sync with its master after %v: %w", timeout, err)
			}
			return fmt.Errorf("not in sync with its master after %v:\n%s", timeout, info)
		}
		time.Sleep(readyPoll)
	}
}

// synced reports whether an INFO replication text shows a replica whose
// link is up and whose initial sync is over.
func synced(info string) bool {
	fields := redisinfo.Fields(info)
	return fields["role"] == "slave" &&
		fields["master_link_status"] == "up" &&
		fields["master_sync_in_progress"] == "0"
}
