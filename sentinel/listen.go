package sentinel

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/strategy"
)

// Pauses of the listener between two Sentinels that could not be
// listened to, doubling from the first to the last.
const (
	minListenPause = 50 * time.Millisecond
	maxListenPause = 2 * time.Second
)

// switchChannel is where Sentinels announce a new master.
const switchChannel = "+switch-master"

// listen is the Pool's listener, started by New: it subscribes to
// +switch-master on one Sentinel after another (the one that answered
// last first), moves the Pool to each new master announced for its
// master name, and when the connection fails or its Sentinel stops
// answering PING, listens to the next. It returns when ctx ends (Close),
// and closes p.done then.
func (p *Pool) listen(ctx context.Context) {
	defer close(p.done)
	pause := minListenPause
	for ctx.Err() == nil {
		if p.listenOnce(ctx) {
			pause = minListenPause
		}
		timer := time.NewTimer(pause)
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		timer.Stop()
		pause = min(2*pause, maxListenPause)
	}
}

// listenOnce subscribes on the first Sentinel that accepts and follows
// its messages until the connection fails. It reports whether it
// subscribed. A switch announced while no Sentinel was listened to is
// caught by asking the Sentinels once subscribed.
func (p *Pool) listenOnce(ctx context.Context) bool {
	psc, ok := p.subscribe(ctx)
	if !ok {
		return false
	}
	defer func() {
		p.mu.Lock()
		p.listening = nil
		p.mu.Unlock()
		psc.Close()
	}()
	if t := p.cur.Load(); t != nil {
		_, _ = p.refresh(ctx, t) // a failure is retried by GetContext's callers
	}

	// The pinger's PINGs make a silent Sentinel fail the read below; it
	// ends when listenOnce returns.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	wg.Go(func() {
		ticker := time.NewTicker(p.opts.healthInterval)
		defer ticker.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ticker.C:
				if psc.Ping("") != nil {
					return // the read fails too
				}
			}
		}
	})
	for {
		switch m := psc.ReceiveWithTimeout(p.opts.healthInterval + p.opts.timeout).(type) {
		case redis.Message:
			if addr, ok := parseSwitch(string(m.Data), p.master); ok {
				if t := p.cur.Load(); t != nil && t.addr != addr {
					p.moveTo(t, addr)
				}
			}
		case error:
			return true
		}
	}
}

// subscribe returns a connection subscribed to +switch-master on the
// first Sentinel that accepts, registered as p.listening so that Close
// can end its reads; false when none accepts or Close came first.
func (p *Pool) subscribe(ctx context.Context) (redis.PubSubConn, bool) {
	p.mu.Lock()
	order := append([]string(nil), p.sentinels...)
	p.mu.Unlock()
	for _, s := range order {
		if ctx.Err() != nil {
			return redis.PubSubConn{}, false
		}
		if psc, err := p.subscribeOn(ctx, s); err == nil {
			return psc, true
		}
	}
	return redis.PubSubConn{}, false
}

// subscribeOn connects to the Sentinel at s, registers the connection as
// p.listening (unless Close came first) and subscribes to +switch-master,
// bounded by ctx and the Pool's timeout. On failure the connection is
// closed and unregistered.
func (p *Pool) subscribeOn(ctx context.Context, s string) (psc redis.PubSubConn, err error) {
	dctx, cancel := context.WithTimeout(ctx, p.opts.timeout)
	defer cancel()
	c, err := redis.DialContext(dctx, "tcp", s, p.opts.sentinelDial...)
	if err != nil {
		return redis.PubSubConn{}, err
	}
	p.mu.Lock()
	closed := p.closed
	if !closed {
		p.listening = c
	}
	p.mu.Unlock()
	defer func() {
		if err != nil {
			p.mu.Lock()
			p.listening = nil
			p.mu.Unlock()
			c.Close()
		}
	}()
	if closed {
		return redis.PubSubConn{}, fmt.Errorf("pool closed: %w", strategy.ErrClosed)
	}
	psc = redis.PubSubConn{Conn: c}
	if err := psc.Subscribe(switchChannel); err != nil {
		return redis.PubSubConn{}, err
	}
	if err, ok := psc.ReceiveWithTimeout(p.opts.timeout).(error); ok {
		return redis.PubSubConn{}, err
	}
	return psc, nil
}

// parseSwitch parses a +switch-master message, "<master name> <old ip>
// <old port> <new ip> <new port>", and returns the new address when the
// message is about master.
func parseSwitch(msg, master string) (string, bool) {
	f := strings.Fields(msg)
	if len(f) != 5 || f[0] != master {
		return "", false
	}
	return net.JoinHostPort(f[3], f[4]), true
}
