package redistest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Leased ports lie below Linux's ephemeral range (32768 and up), so the
// ports the kernel hands out for :0 and for outgoing connections never
// collide with them.
const (
	leaseFirst = 16384
	leaseLast  = 32767
)

// leaseDirName is the directory, in os.TempDir, of the port lease files.
const leaseDirName = "lockzoo-ports"

// leaseDir returns the directory of the port lease files shared by every
// test binary of the machine (with the same TMPDIR).
func leaseDir() string { return filepath.Join(os.TempDir(), leaseDirName) }

// portLease is a loopback port reserved for one owner: whoever holds an
// exclusive flock on the file named after the port in the lease directory.
// The kernel drops the flock when its holder dies, so a crashed test
// binary leaves no port reserved (its file may remain; it holds nothing).
type portLease struct {
	port string
	f    *os.File
}

// leasePort reserves a port of 16384–32767 that no other holder has
// leased and that can be bound on 127.0.0.1 now. The caller binds it
// later, keeps the lease while anything of its own may listen on the port
// (across a kill and restart too) and releases it after that is dead.
func leasePort() (*portLease, error) {
	n := leaseLast - leaseFirst + 1
	start := rand.IntN(n)
	ports := make([]int, n)
	for i := range ports {
		ports[i] = leaseFirst + (start+i)%n
	}
	return leaseIn(leaseDir(), ports)
}

// leaseIn leases the first port of ports that no holder has leased in dir
// and that can be bound.
func leaseIn(dir string, ports []int) (*portLease, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("lease a port: %w", err)
	}
	for _, port := range ports {
		l, err := tryLease(dir, port)
		if err != nil {
			return nil, err
		}
		if l != nil {
			return l, nil
		}
	}
	return nil, fmt.Errorf("lease a port: all %d candidates are leased or bound", len(ports))
}

// tryLease leases port in dir, or returns nil when another holder has it
// or it cannot be bound.
func tryLease(dir string, port int) (*portLease, error) {
	name := filepath.Join(dir, strconv.Itoa(port))
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("lease port %d: %w", port, err)
	}
	if ok, err := lockFile(f); !ok {
		cerr := f.Close()
		if err != nil {
			return nil, errors.Join(fmt.Errorf("lease port %d: lock %s: %w", port, name, err), cerr)
		}
		return nil, cerr
	}
	l := &portLease{port: strconv.Itoa(port), f: f}
	if !bindable(port) {
		return nil, l.release()
	}
	return l, nil
}

// bindable reports whether 127.0.0.1:port can be listened on now. It
// listens under syscall.ForkLock so that no child forked meanwhile
// inherits the listener and keeps the port bound.
func bindable(port int) bool {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	return ln.Close() == nil
}

// release gives the port up: unlock first, then close. Releasing a nil or
// released lease does nothing.
func (l *portLease) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	uerr := unlockFile(l.f)
	cerr := l.f.Close()
	l.f = nil
	if err := errors.Join(uerr, cerr); err != nil {
		return fmt.Errorf("release port %s: %w", l.port, err)
	}
	return nil
}

// listenLeased listens on a leased port of 127.0.0.1 and returns the
// listener with its lease, trying another port when the leased one was
// bound meanwhile by a program that takes no leases.
func listenLeased() (net.Listener, *portLease, error) {
	var err error
	for range launchAttempts {
		var l *portLease
		if l, err = leasePort(); err != nil {
			return nil, nil, err
		}
		var ln net.Listener
		if ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", l.port)); err == nil {
			return ln, l, nil
		}
		if rerr := l.release(); rerr != nil {
			return nil, nil, errors.Join(err, rerr)
		}
	}
	return nil, nil, fmt.Errorf("listen: no free port after %d attempts: %w", launchAttempts, err)
}

// LeasePort reserves a loopback port for the test, as the harness does for
// its own servers, and releases it when the test ends (t.Cleanup): for a
// port a node listens on besides its own (WithFlags("--tls-port", port)).
// Call it before Start, so that the nodes are torn down before the lease
// ends. When no port can be leased it calls t.Fatalf.
func LeasePort(t TB) string {
	t.Helper()
	l, err := leasePort()
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(func() {
		if err := l.release(); err != nil {
			t.Errorf("redistest: %v", err)
		}
	})
	return l.port
}
