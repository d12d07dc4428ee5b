#!/usr/bin/env bash
# redis-image.sh builds the Docker image lockzoo/redis:local FROM scratch out of
# the host's redis-server binary and the shared libraries it links against, so
# that internal/redistest can run Redis in containers without a registry.
#
# Usage: bash scripts/redis-image.sh        (called by `make redis-image`)
# Env:   LOCKZOO_REDIS_IMAGE_TAG overrides the tag (default lockzoo/redis:local).
set -euo pipefail

tag="${LOCKZOO_REDIS_IMAGE_TAG:-lockzoo/redis:local}"

if ! server="$(command -v redis-server)"; then
	echo "redis-image: redis-server not found: apt-get install redis-server" >&2
	exit 1
fi
if ! command -v docker >/dev/null; then
	echo "redis-image: docker not found: install Docker and start the engine" >&2
	exit 1
fi

ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT

# The binary must be named redis-server: Debian installs it as a symlink to
# redis-check-rdb, and Redis picks its mode from argv[0].
mkdir -p "$ctx/root/usr/local/bin" "$ctx/root/data" "$ctx/root/tmp"
chmod 1777 "$ctx/root/tmp"
cp -L "$server" "$ctx/root/usr/local/bin/redis-server"

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

cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY root/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["redis-server"]
CMD ["--port", "6379", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", ""]
DOCKERFILE

docker build --quiet --label lockzoo.image=redis --tag "$tag" "$ctx" >/dev/null
echo "$tag"
