// Package redistest starts real, disposable Redis servers for tests: independent
// masters, replicas of them, and the faults a distributed lock must survive
// (a crashed node, a restarted node with or without its data, a frozen node,
// a promoted replica).
//
// Start returns the nodes of one test and tears them down in t.Cleanup. Each
// node runs on one of two backends:
//
//   - "docker": one container per node (github.com/ory/dockertest/v3), its
//     port 6379 published on a fixed free port of 127.0.0.1, so that a killed
//     and restarted node keeps its address. The same port is published on
//     the host's address on Docker's default bridge, where replicas reach
//     their master.
//   - "process": a redis-server child process on a free loopback port, with
//     a directory of its own for the append-only file and the log.
//
// The environment chooses the backend:
//
//   - LOCKZOO_REDIS_BACKEND=docker|process forces one; when it cannot run, the
//     test fails with the reason.
//   - Otherwise docker is used when an engine answers and a Redis image is
//     available locally, else process when redis-server is on PATH, else docker
//     after pulling redis:7-alpine; when nothing works the test fails with what
//     to install. Tests are never skipped.
//   - LOCKZOO_REDIS_IMAGE names the image for docker. By default it is
//     redis:7-alpine when present locally, else lockzoo/redis:local (built from
//     the host's redis-server by `make redis-image`), else redis:7-alpine is
//     pulled.
//
// Containers carry the label lockzoo.test=1, so leftovers of a crashed test
// binary can be removed with
//
//	docker rm -f $(docker ps -aq --filter label=lockzoo.test=1)
//
// Child processes of the process backend are killed with the test binary on
// Linux (PR_SET_PDEATHSIG).
package redistest
