package redistest

import (
	"os"
	"path/filepath"
	"strings"
)

// envServer names the server program both backends run.
const envServer = "LOCKZOO_REDIS_SERVER"

// defaultServer is the server program run when LOCKZOO_REDIS_SERVER is
// unset.
const defaultServer = "redis-server"

// serverProgram returns the server program to run: LOCKZOO_REDIS_SERVER
// (redis-server, valkey-server, or a path to either), else redis-server.
// The process backend looks it up on PATH; the docker backend runs the
// program of that base name inside its image.
func serverProgram() string {
	if s := os.Getenv(envServer); s != "" {
		return s
	}
	return defaultServer
}

// imagesFor returns the images the docker backend looks for when
// LOCKZOO_REDIS_IMAGE is unset, for the server program server: the
// official image ("" when there is none the harness knows) and the one
// `make redis-image` builds from the host's binary.
func imagesFor(server string) (official, local string) {
	base := filepath.Base(server)
	switch base {
	case "redis-server":
		return "redis:7-alpine", "lockzoo/redis:local"
	case "valkey-server":
		return "valkey/valkey:8-alpine", "lockzoo/valkey:local"
	}
	return "", "lockzoo/" + strings.TrimSuffix(base, "-server") + ":local"
}
