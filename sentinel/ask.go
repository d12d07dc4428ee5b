package sentinel

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/lockerr"
)

// errNotKnownHere is what askOne returns when its Sentinel does not
// monitor the master name.
var errNotKnownHere = errors.New("does not know the master name")

// askSentinels asks the Sentinels in turn, the one that answered last
// first, for the master's address and returns the first one named; the
// Sentinel that named it is asked first next time. When none names it,
// the error wraps ErrUnknownMaster if any of them answered that it does
// not know the name, else ErrNoSentinel, and holds each Sentinel's answer;
// it wraps ctx's error when ctx ended.
func (p *Pool) askSentinels(ctx context.Context) (string, error) {
	p.mu.Lock()
	order := append([]string(nil), p.sentinels...)
	p.mu.Unlock()
	var errs lockerr.Joined
	unknown := false
	for _, s := range order {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		addr, err := p.askOne(ctx, s)
		if err == nil {
			p.answered(s)
			return addr, nil
		}
		unknown = unknown || errors.Is(err, errNotKnownHere)
		errs = append(errs, fmt.Errorf("%s: %w", s, err))
	}
	if unknown {
		return "", fmt.Errorf("%w %q (%w)", ErrUnknownMaster, p.master, errs)
	}
	return "", fmt.Errorf("%w for master %q: %w", ErrNoSentinel, p.master, errs)
}

// askOne asks the Sentinel at s for the master's address (SENTINEL
// GET-MASTER-ADDR-BY-NAME) on a connection of its own, bounded by ctx and
// the Pool's timeout.
func (p *Pool) askOne(ctx context.Context, s string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.timeout)
	defer cancel()
	c, err := redis.DialContext(ctx, "tcp", s, p.opts.sentinelDial...)
	if err != nil {
		return "", err
	}
	defer c.Close()
	reply, err := redis.Strings(redis.DoContext(c, ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", p.master))
	switch {
	case errors.Is(err, redis.ErrNil):
		return "", errNotKnownHere
	case err != nil:
		return "", err
	case len(reply) != 2 || reply[0] == "" || reply[1] == "":
		return "", fmt.Errorf("SENTINEL GET-MASTER-ADDR-BY-NAME answered %q, want [ip port]", reply)
	}
	return net.JoinHostPort(reply[0], reply[1]), nil
}

// answered moves the Sentinel s to the front of the order in which
// Sentinels are asked.
func (p *Pool) answered(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.sentinels {
		if x == s {
			copy(p.sentinels[1:i+1], p.sentinels[:i])
			p.sentinels[0] = s
			return
		}
	}
}
