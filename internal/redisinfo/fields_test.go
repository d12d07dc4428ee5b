package redisinfo

import (
	"maps"
	"testing"
)

func TestFields(t *testing.T) {
	tests := []struct {
		name string
		info string
		want map[string]string
	}{
		{"empty", "", map[string]string{}},
		{"sections and CRLF", "# CPU\r\nused_cpu_sys:1.5\r\nused_cpu_user:2.25\r\n\r\n# Server\r\nredis_version:7.0.15\r\n",
			map[string]string{"used_cpu_sys": "1.5", "used_cpu_user": "2.25", "redis_version": "7.0.15"}},
		{"value with colons", "executable:/usr/bin/redis-server\nslave0:ip=127.0.0.1,port=7001,state=online\n",
			map[string]string{"executable": "/usr/bin/redis-server", "slave0": "ip=127.0.0.1,port=7001,state=online"}},
		{"cluster info", "cluster_state:ok\ncluster_known_nodes:3\n", map[string]string{"cluster_state": "ok", "cluster_known_nodes": "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Fields(tt.info); !maps.Equal(got, tt.want) {
				t.Errorf("Fields(%q) = %v, want %v", tt.info, got, tt.want)
			}
		})
	}
}
