//go:build unix

package redistest

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f without waiting; it reports false
// when another open file holds one.
func lockFile(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// unlockFile drops the flock lockFile took on f.
func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
