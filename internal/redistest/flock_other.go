//go:build !unix

package redistest

import "os"

// lockFile succeeds at once: without flock, leases do not exclude other
// test binaries, and only the readiness check protects against a port
// taken by another.
func lockFile(*os.File) (bool, error) { return true, nil }

// unlockFile does nothing.
func unlockFile(*os.File) error { return nil }
