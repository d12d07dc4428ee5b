#!/usr/bin/env bash
# compare-cluster: start a 3-master Redis Cluster of redis-server processes
# (LOCKZOO_REDIS_SERVER=valkey-server for Valkey) on loopback ports, run
# lockcompare -cluster on it with the arguments given, and tear it down.
set -euo pipefail
server=${LOCKZOO_REDIS_SERVER:-redis-server}
cli=${server%-server}-cli
dir=$(mktemp -d)
pids=()
# free reports whether nothing listens on the loopback port $1.
free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# waitFor runs "$@" every 0.1 s until it succeeds, for at most 30 s.
waitFor() {
	for _ in $(seq 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	echo "compare-cluster: gave up waiting for: $*" >&2
	return 1
}
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
addrs=()
for i in 0 1 2; do
	port=$((20000 + RANDOM % 20000))
	while ! free "$port" || ! free "$((port + 10000))"; do port=$((20000 + RANDOM % 20000)); done
	mkdir -p "$dir/$port"
	(cd "$dir/$port" && exec "$server" --port "$port" --bind 127.0.0.1 --cluster-enabled yes \
		--cluster-config-file nodes.conf --save "" --appendonly no --daemonize no >"$dir/$port/log" 2>&1) &
	pids+=($!)
	addrs+=("127.0.0.1:$port")
done
for a in "${addrs[@]}"; do
	waitFor "$cli" -h 127.0.0.1 -p "${a##*:}" ping
done
for pid in "${pids[@]}"; do
	kill -0 "$pid" || { echo "compare-cluster: a node did not start: $(cat "$dir"/*/log)" >&2; exit 1; }
done
timeout 60 "$cli" --cluster create "${addrs[@]}" --cluster-yes >/dev/null
clusterOK() { "$cli" -h 127.0.0.1 -p "$1" cluster info | grep -q cluster_state:ok; }
for a in "${addrs[@]}"; do
	waitFor clusterOK "${a##*:}"
done
seeds=$(IFS=,; echo "${addrs[*]}")
echo "compare-cluster: a 3-master cluster at $seeds ($server)" >&2
go run ./cmd/lockcompare -cluster "$seeds" "$@"
