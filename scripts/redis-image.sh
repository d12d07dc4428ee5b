#!/usr/bin/env bash
# redis-image.sh builds the Docker image lockzoo/redis:local FROM scratch out of
# the host's redis-server binary and the shared libraries it links against, so
# that internal/redistest can run Redis in containers without a registry.
# Given valkey-server instead, it builds lockzoo/valkey:local out of the
# host's valkey-server, which the harness runs under
# LOCKZOO_REDIS_SERVER=valkey-server.
#
# Usage: bash scripts/redis-image.sh [SERVER]   (called by `make redis-image`)
#        SERVER is redis-server (default) or valkey-server.
# Env:   LOCKZOO_REDIS_IMAGE_TAG overrides the tag (default
#        lockzoo/redis:local, lockzoo/valkey:local for valkey-server).
set -euo pipefail

name="${1:-redis-server}"
case "$name" in
redis-server | valkey-server) ;;
*)
	echo "redis-image: server $name: want redis-server or valkey-server" >&2
	exit 1
	;;
esac
tag="${LOCKZOO_REDIS_IMAGE_TAG:-lockzoo/${name%-server}:local}"

if ! server="$(command -v "$name")"; then
	echo "redis-image: $name not found: apt-get install $name" >&2
	exit 1
fi
if ! command -v docker >/dev/null; then
	echo "redis-image: docker not found: install Docker and start the engine" >&2
	exit 1
fi

ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT

# The binary must keep its name: Debian installs redis-server as a symlink
# to redis-check-rdb (valkey-server to valkey-check-rdb), and the server
# picks its mode from argv[0].
mkdir -p "$ctx/root/usr/local/bin" "$ctx/root/data" "$ctx/root/tmp"
chmod 1777 "$ctx/root/tmp"
cp -L "$server" "$ctx/root/usr/local/bin/$name"

# Every library ldd resolves ("name => /path (addr)") plus the loader, which
# ldd prints as a bare absolute path. Copied at the same path, symlinks
# resolved, so the dynamic loader finds them where the binary expects them.
deps="$(ldd "$server")"
if grep -q 'not found' <<<"$deps"; then
	echo "redis-image: $server misses shared libraries:" >&2
	grep 'not found' <<<"$deps" >&2
	exit 1
fi
libs="$(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$deps" | sort -u)"
if [[ -z "$libs" ]]; then
	echo "redis-image: ldd listed no libraries for $server" >&2
	exit 1
fi
while IFS= read -r lib; do
	mkdir -p "$ctx/root$(dirname "$lib")"
	cp -L "$lib" "$ctx/root$lib"
done <<<"$libs"

cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM scratch
COPY root/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["$name"]
CMD ["--port", "6379", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", ""]
DOCKERFILE

docker build --quiet --label lockzoo.image="${name%-server}" --tag "$tag" "$ctx" >/dev/null
echo "$tag"
