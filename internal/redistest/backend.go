package redistest

import (
	"errors"
	"fmt"
	"os"
)

// Environment variables that steer the choice of backend and image.
const (
	envBackend = "LOCKZOO_REDIS_BACKEND"
	envImage   = "LOCKZOO_REDIS_IMAGE"
)

// Backend names, as Node.Backend reports them and LOCKZOO_REDIS_BACKEND takes them.
const (
	backendDocker  = "docker"
	backendProcess = "process"
)

// installHint tells a developer how to get any backend working.
const installHint = "apt-get install redis-server, or start Docker and run `make redis-image`"

// backend launches Redis servers of one kind.
type backend interface {
	// name is backendDocker or backendProcess.
	name() string
	// describe says what the backend runs, for the log line of Start.
	describe() string
	// launch starts a fresh server on a leased port and returns once it is
	// ready (the process backend: INFO server on its port names the
	// child's pid). On error nothing is left running and nothing leased.
	launch(spec serverSpec) (server, error)
}

// server is one running (or killed) Redis server of a backend. Its methods
// are called from one goroutine at a time: the test's.
type server interface {
	// addr is "127.0.0.1:port", reachable from the host; it never changes.
	addr() string
	// peer is the host and port at which other servers of the same backend
	// reach this one, for REPLICAOF.
	peer() (host, port string)
	// kill stops the server with SIGKILL and waits until it is gone.
	// Killing a killed server does nothing.
	kill() error
	// start starts a killed server again on the same address, whose lease
	// it kept, and returns once it is ready as launch says.
	start() error
	// pause freezes the server; resume thaws it.
	pause() error
	resume() error
	// destroy thaws and kills the server and frees everything it holds,
	// its port leases last.
	destroy() error
}

// serverSpec is what a new server should be.
type serverSpec struct {
	persist bool
	// cluster starts the server with cluster mode enabled and a cluster
	// configuration file of its own; no slots are assigned yet.
	cluster bool
	// acl, when not empty, is the text of the server's ACL file.
	acl string
	// replicaHost and replicaPort name the master, as returned by its peer
	// method; both are empty for a master.
	replicaHost, replicaPort string
	// flags are more redis-server flags, after the harness's own.
	flags []string
	// announce makes a server in a container announce, as a replica, the
	// address at which the host and other containers reach it (its peer
	// address), so that its master and a Sentinel name a reachable replica.
	announce bool
	// lease, when not nil, holds the port to listen on (in a container,
	// the host port to publish) instead of a newly leased one: launch
	// tries it once and takes the lease over (the server releases it when
	// destroyed, launch when it fails).
	lease *portLease
	// sentinel, when not empty, is the text of a sentinel.conf: the server
	// runs as a Sentinel (--sentinel) instead of a data node, and ignores
	// the other fields.
	sentinel string
}

// portLease returns the port a launch attempt listens on, and takes
// over: spec.lease when it holds one, else a newly leased port. It fails
// only as leasePort does.
func (spec serverSpec) portLease() (*portLease, error) {
	if spec.lease != nil {
		return spec.lease, nil
	}
	return leasePort()
}

// redisFlags returns the redis-server flags shared by both backends for a
// server listening on port.
func redisFlags(port string, spec serverSpec) []string {
	flags := []string{
		"--port", port,
		"--protected-mode", "no",
		"--save", "",
		// A replica's initial sync starts at once instead of after 5 s.
		"--repl-diskless-sync-delay", "0",
	}
	if spec.persist {
		flags = append(flags, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		flags = append(flags, "--appendonly", "no")
	}
	if spec.replicaHost != "" {
		flags = append(flags, "--replicaof", spec.replicaHost, spec.replicaPort)
	}
	if spec.cluster {
		// Relative to the server's directory, which is the node's own.
		flags = append(flags, "--cluster-enabled", "yes", "--cluster-config-file", clusterConfigFile)
	}
	flags = append(flags, spec.flags...)
	return flags
}

// chooseBackend picks the backend for one Start call from the environment,
// as the package documentation describes. testName labels docker containers;
// dir returns a fresh directory for a process node.
func chooseBackend(testName string, dir func() string) (backend, error) {
	switch forced := os.Getenv(envBackend); forced {
	case backendDocker:
		b, err := newDockerBackend(testName, true)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", envBackend, forced, err)
		}
		return b, nil
	case backendProcess:
		b, err := newProcessBackend(dir)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", envBackend, forced, err)
		}
		return b, nil
	case "":
	default:
		return nil, fmt.Errorf("%s=%q: want %q or %q (or unset to choose automatically)",
			envBackend, forced, backendDocker, backendProcess)
	}

	d, dockerErr := newDockerBackend(testName, false)
	if dockerErr == nil {
		return d, nil
	}
	p, processErr := newProcessBackend(dir)
	if processErr == nil {
		return p, nil
	}
	if errors.Is(dockerErr, errNoLocalImage) {
		// An engine answers but has no image: pulling is the last resort.
		return newDockerBackend(testName, true)
	}
	return nil, fmt.Errorf("no backend can run Redis: %s (docker: %v; process: %v)",
		installHint, dockerErr, processErr)
}

// clusterConfigFile is the name of a cluster node's configuration file, in
// its directory.
const clusterConfigFile = "nodes.conf"

// launchAttempts bounds how often a backend retries with another port when the
// one it leased was taken (by a program that takes no leases) before the
// server could bind it.
const launchAttempts = 5
