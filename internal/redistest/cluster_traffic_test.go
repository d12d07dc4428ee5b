package redistest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// traffic is a client incrementing keys in a loop, following MOVED and ASK
// as a cluster client does. Its goroutine ends at stop.
type traffic struct {
	quit chan struct{}
	done chan struct{}
	mu   sync.Mutex
	// counts are the increments that succeeded, per key.
	counts map[string]int
	ops    int
	errs   []error
}

// startTraffic starts incrementing keys, sending each first to addr.
func startTraffic(t *testing.T, addr string, keys []string) *traffic {
	t.Helper()
	tr := &traffic{quit: make(chan struct{}), done: make(chan struct{}), counts: map[string]int{}}
	route := map[string]string{}
	for _, k := range keys {
		route[k] = addr
	}
	go func() {
		defer close(tr.done)
		for i := 0; ; i++ {
			select {
			case <-tr.quit:
				return
			default:
			}
			key := keys[i%len(keys)]
			_, err := followRedirects(route, key, "INCR", key)
			tr.mu.Lock()
			if err != nil {
				tr.errs = append(tr.errs, fmt.Errorf("INCR %s: %w", key, err))
			} else {
				tr.counts[key]++
				tr.ops++
			}
			tr.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		select {
		case <-tr.quit:
		default:
			close(tr.quit)
		}
		<-tr.done
	})
	return tr
}

// waitOps waits until n more increments succeeded.
func (tr *traffic) waitOps(t *testing.T, n int) {
	t.Helper()
	tr.mu.Lock()
	target := tr.ops + n
	tr.mu.Unlock()
	eventually(t, 10*time.Second, fmt.Sprintf("%d increments", n), func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.ops >= target
	})
}

// stop ends the client and returns the increments that succeeded per key;
// it fails the test if any failed.
func (tr *traffic) stop(t *testing.T) map[string]int {
	t.Helper()
	close(tr.quit)
	<-tr.done
	if err := errors.Join(tr.errs...); err != nil {
		t.Errorf("the client's commands failed: %v", err)
	}
	return tr.counts
}

// followRedirects sends a command on key to the address route holds for
// it, following MOVED (which updates route) and ASK (ASKING, then the
// command, once), as a cluster client does.
func followRedirects(route map[string]string, key, cmd string, args ...any) (any, error) {
	addr, asking := route[key], false
	for range 5 {
		reply, err := sendAsking(addr, asking, cmd, args...)
		var rerr redis.Error
		if !errors.As(err, &rerr) {
			return reply, err
		}
		f := strings.Fields(string(rerr))
		switch {
		case len(f) == 3 && f[0] == "MOVED":
			addr, asking = f[2], false
			route[key] = addr
		case len(f) == 3 && f[0] == "ASK":
			addr, asking = f[2], true
		default:
			return reply, err
		}
	}
	return nil, fmt.Errorf("more than 5 redirects for %s", key)
}
