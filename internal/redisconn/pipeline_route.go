package redisconn

import (
	"strconv"
	"strings"
	"sync"
)

// Router is a Sharded pool that names the master a key's commands go to
// (package cluster). A Pipeline over a Router keeps one Pipeline per
// master and sends each command through its key's, so that each master
// has a stream of its own: a slow or failed master holds back and fails
// only the commands sent to it.
type Router interface {
	Sharded
	// NodeOf returns the address of the master that serves key now, or
	// "" when none is known.
	NodeOf(key string) string
}

// routes is a Pipeline's per-master Pipelines, when its pool is a Router.
type routes struct {
	r     Router
	mu    sync.Mutex
	nodes map[string]*Pipeline // by master address
}

// newRoutes returns p's routes when p's pool is a Router, else nil.
func newRoutes(p *Pipeline) *routes {
	r, ok := p.pool.(Router)
	if !ok {
		return nil
	}
	return &routes{r: r, nodes: map[string]*Pipeline{}}
}

// of returns the Pipeline of the master of first's key (second's when
// first has none), made like p; nil when the commands name no key or the
// master is not known (p then sends them itself, and the pool routes).
func (rs *routes) of(p *Pipeline, first, second Command) *Pipeline {
	key, ok := commandKey(first)
	if !ok {
		if key, ok = commandKey(second); !ok {
			return nil
		}
	}
	addr := rs.r.NodeOf(key)
	if addr == "" {
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	sub := rs.nodes[addr]
	if sub == nil {
		sub = &Pipeline{pool: p.pool, byDeadline: p.byDeadline, yields: p.yields, markPrefix: newMarkPrefix()}
		rs.nodes[addr] = sub
	}
	return sub
}

// commandKey returns the key that routes c: a script's first key (none
// when it has none), else its first argument; false for a command
// without a key, or the zero Command.
func commandKey(c Command) (string, bool) {
	switch {
	case c.Name == "":
		return "", false
	case strings.EqualFold(c.Name, "EVALSHA"), strings.EqualFold(c.Name, "EVAL"):
		if len(c.Args) < 3 || !positive(c.Args[1]) {
			return "", false
		}
		k, ok := c.Args[2].(string)
		return k, ok
	case len(c.Args) == 0, strings.EqualFold(c.Name, "CLIENT"), strings.EqualFold(c.Name, "ECHO"):
		return "", false
	}
	k, ok := c.Args[0].(string)
	return k, ok
}

// positive reports whether a script's key count v is at least 1.
func positive(v any) bool {
	switch n := v.(type) {
	case int:
		return n > 0
	case int64:
		return n > 0
	case string:
		i, err := strconv.Atoi(n)
		return err == nil && i > 0
	}
	return false
}
