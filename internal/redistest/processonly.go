package redistest

import (
	"fmt"
	"os"
)

// processOnly returns the process backend for a set-up that the docker
// backend does not run (a cluster; see the package documentation). When LOCKZOO_REDIS_BACKEND forces docker it logs that the
// set-up runs as processes anyway. It returns an error saying what to
// install when redis-server is missing.
func processOnly(t TB, what string) (backend, error) {
	t.Helper()
	switch forced := os.Getenv(envBackend); forced {
	case backendDocker:
		t.Logf("redistest: %s=%s, but %s runs on the process backend only", envBackend, forced, what)
	case backendProcess, "":
	default:
		return nil, fmt.Errorf("%s=%q: want %q or %q (or unset to choose automatically)",
			envBackend, forced, backendDocker, backendProcess)
	}
	b, err := newProcessBackend(t.TempDir)
	if err != nil {
		return nil, fmt.Errorf("%s needs the process backend: %w", what, err)
	}
	return b, nil
}
