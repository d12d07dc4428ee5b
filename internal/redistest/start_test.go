package redistest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

func TestStartGivesIndependentNodes(t *testing.T) {
	t.Parallel()
	nodes := Start(t, 3)
	if len(nodes) != 3 {
		t.Fatalf("Start(t, 3) returned %d nodes", len(nodes))
	}
	seen := map[string]bool{}
	for _, node := range nodes {
		checkBackend(t, node)
		if seen[node.Addr()] {
			t.Fatalf("address %s returned twice", node.Addr())
		}
		seen[node.Addr()] = true
		if pong, err := redis.String(node.Do("PING")); err != nil || pong != "PONG" {
			t.Fatalf("PING %s = %q, %v", node.Addr(), pong, err)
		}
		mustDo(t, node, "SET", "owner", node.Addr())
	}
	for _, node := range nodes {
		if v, ok := getString(t, node, "owner"); v != node.Addr() {
			t.Errorf("GET owner on %s = %q (exists %v), want its own address", node.Addr(), v, ok)
		}
		if n, err := redis.Int(node.Do("DBSIZE")); err != nil || n != 1 {
			t.Errorf("DBSIZE on %s = %d, %v; want 1", node.Addr(), n, err)
		}
	}
	// Each node has a pool of its own, reaching that node.
	for _, node := range nodes {
		if v, err := redis.String(poolDo(node, "GET", "owner")); err != nil || v != node.Addr() {
			t.Errorf("GET owner through the pool of %s = %q, %v", node.Addr(), v, err)
		}
	}
	checkPool(t, nodes[0])
}

// checkPool checks the settings of node's pool and that the caller's
// context bounds dialing. The pool must hold one idle connection.
func checkPool(t *testing.T, node *Node) {
	t.Helper()
	p := node.Pool()
	if node.Pool() != p {
		t.Fatal("Pool() returned a different pool on the second call")
	}
	if p.MaxIdle != 256 || p.MaxActive != 0 || p.IdleTimeout != time.Minute || p.Wait {
		t.Errorf("pool MaxIdle=%d MaxActive=%d IdleTimeout=%v Wait=%v; want 256, 0, 1m, false",
			p.MaxIdle, p.MaxActive, p.IdleTimeout, p.Wait)
	}
	if idle := p.Stats().IdleCount; idle != 1 {
		t.Fatalf("IdleCount = %d, want 1", idle)
	}
	c := p.Get() // takes the idle connection, so the next Get must dial
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if c2, err := p.GetContext(ctx); err == nil {
		c2.Close()
		t.Fatal("GetContext with a cancelled context dialed anyway")
	}
}

func TestStartFailsWithAReason(t *testing.T) {
	noRedis := t.TempDir()   // a PATH without redis-server
	deadRedis := t.TempDir() // a PATH whose redis-server exits at once
	script := "#!/bin/sh\necho 'FATAL: cannot start' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(deadRedis, "redis-server"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	noEngine := "unix://" + t.TempDir() + "/docker.sock"
	tests := []struct {
		name    string
		env     map[string]string
		n       int
		opts    []Option
		wantAny []string // the message holds at least one of these
	}{
		{
			name:    "unknown backend",
			env:     map[string]string{envBackend: "bogus"},
			n:       1,
			wantAny: []string{`"bogus"`},
		},
		{
			name:    "no node",
			n:       0,
			wantAny: []string{"at least one node"},
		},
		{
			name:    "process without redis-server",
			env:     map[string]string{envBackend: backendProcess, envServer: defaultServer, "PATH": noRedis},
			n:       1,
			wantAny: []string{"apt-get install redis-server"},
		},
		{
			name:    "process without valkey-server",
			env:     map[string]string{envBackend: backendProcess, envServer: "valkey-server", "PATH": noRedis},
			n:       1,
			wantAny: []string{"apt-get install valkey-server"},
		},
		{
			name:    "process whose server dies",
			env:     map[string]string{envBackend: backendProcess, envServer: defaultServer, "PATH": deadRedis},
			n:       2,
			wantAny: []string{"exited: exit status 1"},
		},
		{
			name:    "cluster replicas",
			n:       1,
			opts:    []Option{WithClusterReplicas()},
			wantAny: []string{"Start does not take WithClusterReplicas"},
		},
		{
			name:    "docker without engine",
			env:     map[string]string{envBackend: backendDocker, "DOCKER_HOST": noEngine},
			n:       1,
			wantAny: []string{"docker engine does not answer"},
		},
		{
			name:    "nothing installed",
			env:     map[string]string{envBackend: "", "PATH": noRedis, "DOCKER_HOST": noEngine},
			n:       1,
			wantAny: []string{installHint},
		},
		{
			name:    "docker with a missing image",
			env:     map[string]string{envBackend: backendDocker, envImage: "lockzoo/no-such-image:none"},
			n:       1,
			wantAny: []string{envImage + "=lockzoo/no-such-image:none", "docker engine does not answer"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			got := runStart(t, tc.n, tc.opts...)
			if got.skip != "" {
				t.Fatalf("Start skipped the test: %s", got.skip)
			}
			if got.fatal == "" {
				t.Fatal("Start did not call Fatalf")
			}
			t.Logf("Fatalf: %s", got.fatal)
			for _, want := range tc.wantAny {
				if strings.Contains(got.fatal, want) {
					return
				}
			}
			t.Errorf("Fatalf message %q holds none of %q", got.fatal, tc.wantAny)
		})
	}
}

// TestWithFlags: the flags reach redis-server, and the replica's too.
func TestWithFlags(t *testing.T) {
	t.Parallel()
	node := Start(t, 1, WithFlags("--rename-command", "GETSET", "", "--maxmemory-policy", "allkeys-lru"))[0]
	for _, n := range []*Node{node, node.StartReplica()} {
		if _, err := n.Do("GETSET", "k", "v"); err == nil || !strings.Contains(err.Error(), "unknown command") {
			t.Errorf("GETSET on %s: err = %v, want unknown command", n.Addr(), err)
		}
		reply, err := redis.StringMap(n.Do("CONFIG", "GET", "maxmemory-policy"))
		if err != nil || reply["maxmemory-policy"] != "allkeys-lru" {
			t.Errorf("CONFIG GET maxmemory-policy on %s = %v, %v; want allkeys-lru", n.Addr(), reply, err)
		}
	}
}
