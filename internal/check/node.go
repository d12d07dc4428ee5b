package check

import (
	"context"
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/redisinfo"
)

// settings are the configuration parameters the check reads with CONFIG
// GET, one call each (Redis before 7 takes one pattern per call).
func settings() []string {
	return []string{
		"maxmemory", "maxmemory-policy",
		"appendonly", "appendfsync", "save",
		"min-replicas-to-write", "min-replicas-max-lag", "replica-read-only",
	}
}

// infoFallback names the INFO field that reports a setting exactly, for
// when CONFIG GET is refused.
func infoFallback(setting string) (field string, ok bool) {
	switch setting {
	case "maxmemory":
		return "maxmemory", true
	case "maxmemory-policy":
		return "maxmemory_policy", true
	case "appendonly":
		return "aof_enabled", true
	}
	return "", false
}

// node is one address under check: its connection and what it reported.
type node struct {
	target target
	conn   redis.Conn
	// info holds the fields of INFO (every default section); infoErr says
	// why it is empty.
	info    map[string]string
	infoErr error
	// config holds the CONFIG GET replies; configErr says why a setting
	// is missing from it.
	config    map[string]string
	configErr map[string]error
	// cluster is CLUSTER NODES's view, read on first use (readCluster).
	cluster *clusterView
}

// errUnreachable marks an address the check could not connect to or
// authenticate at: the check exits 2.
var errUnreachable = errors.New("lockzoo: lockcompare check: cannot reach the server")

// open dials t and reads INFO and the settings. It returns an error
// wrapping errUnreachable when the dial, the authentication or a PING
// fails; a refused INFO or CONFIG GET is recorded in the node instead.
func open(ctx context.Context, t target) (*node, error) {
	c, err := t.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errUnreachable, t.name, err)
	}
	if _, err := redis.DoContext(c, ctx, "PING"); err != nil {
		c.Close()
		return nil, fmt.Errorf("%w: %s: PING: %w", errUnreachable, t.name, err)
	}
	n := &node{target: t, conn: c, config: map[string]string{}, configErr: map[string]error{}}
	text, err := redis.String(redis.DoContext(c, ctx, "INFO"))
	if err != nil {
		n.infoErr = fmt.Errorf("INFO: %w", err)
	} else {
		n.info = redisinfo.Fields(text)
	}
	for _, s := range settings() {
		n.readSetting(ctx, s)
	}
	return n, nil
}

// readSetting runs CONFIG GET setting and records its value or why there
// is none.
func (n *node) readSetting(ctx context.Context, setting string) {
	reply, err := redis.StringMap(redis.DoContext(n.conn, ctx, "CONFIG", "GET", setting))
	if err != nil {
		n.configErr[setting] = fmt.Errorf("CONFIG GET %s refused: %w", setting, err)
		return
	}
	v, ok := reply[setting]
	if !ok {
		n.configErr[setting] = fmt.Errorf("CONFIG GET %s returned nothing (the server hides it)", setting)
		return
	}
	n.config[setting] = v
}

// close ends the node's connection.
func (n *node) close() error { return n.conn.Close() }

// addr is the node's address as the report names it.
func (n *node) addr() string { return n.target.name }

// setting returns a setting's value from CONFIG GET or, when that was
// refused, from the INFO field that reports it exactly; otherwise the
// error says why it is unknown.
func (n *node) setting(name string) (string, error) {
	if v, ok := n.config[name]; ok {
		return v, nil
	}
	if field, ok := infoFallback(name); ok {
		if v, ok := n.info[field]; ok {
			if name == "appendonly" {
				v = map[string]string{"0": "no", "1": "yes"}[v]
			}
			if v != "" {
				return v, nil
			}
		}
	}
	if err := n.configErr[name]; err != nil {
		return "", err
	}
	return "", fmt.Errorf("CONFIG GET %s: no value", name)
}

// field returns an INFO field, or an error saying why it is unknown.
func (n *node) field(name string) (string, error) {
	if n.infoErr != nil {
		return "", n.infoErr
	}
	v, ok := n.info[name]
	if !ok {
		return "", fmt.Errorf("INFO has no %s field", name)
	}
	return v, nil
}

// unknown is the finding for a setting that could not be read.
func unknown(n *node, family, setting string, err error) Finding {
	return Finding{Addr: n.addr(), Hazard: family, Status: Unknown, Setting: setting, Value: "unknown", Why: err.Error()}
}
