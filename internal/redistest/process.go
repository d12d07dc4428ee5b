package redistest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// killTimeout bounds the wait for a SIGKILLed process to be reaped.
const killTimeout = 10 * time.Second

// processBackend runs each node as a child process of the server program
// (redis-server, or LOCKZOO_REDIS_SERVER's).
type processBackend struct {
	bin string
	// dir returns a fresh directory, removed after the test.
	dir func() string
}

// newProcessBackend finds the server program (serverProgram) on PATH.
func newProcessBackend(dir func() string) (*processBackend, error) {
	server := serverProgram()
	bin, err := exec.LookPath(server)
	if err != nil {
		return nil, fmt.Errorf("%s not found (apt-get install %s): %w", server, filepath.Base(server), err)
	}
	return &processBackend{bin: bin, dir: dir}, nil
}

func (b *processBackend) name() string     { return backendProcess }
func (b *processBackend) describe() string { return b.bin }

// launch starts redis-server on a leased port in a fresh directory, and
// tries another port when the leased one was bound meanwhile by a program
// that takes no leases.
func (b *processBackend) launch(spec serverSpec) (server, error) {
	dir := b.dir()
	var err error
	for range launchAttempts {
		var lease *portLease
		if lease, err = spec.portLease(); err != nil {
			return nil, err
		}
		p := &process{bin: b.bin, dir: dir, port: lease.port, lease: lease}
		if spec.sentinel != "" {
			p.args = sentinelFlags(filepath.Join(dir, sentinelConfFile), p.port)
		} else {
			p.args = redisFlags(p.port, spec)
		}
		p.args = append(p.args, "--bind", "127.0.0.1", "--dir", dir, "--logfile", p.logPath())
		if err = p.prepare(spec); err == nil {
			if err = p.start(); err == nil {
				return p, nil
			}
		}
		err = errors.Join(err, p.releaseLeases())
		if spec.lease != nil || !strings.Contains(p.log(), "already in use") {
			return nil, err
		}
	}
	return nil, fmt.Errorf("no free port after %d attempts: %w", launchAttempts, err)
}

// prepare readies the directory for one launch attempt and adds the flags
// that need it: the cluster bus port and the ACL file. Each attempt starts
// from a fresh log and cluster configuration, so a bind failure is its own.
func (p *process) prepare(spec serverSpec) error {
	for _, name := range []string{p.logPath(), filepath.Join(p.dir, clusterConfigFile)} {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("reset %s: %w", name, err)
		}
	}
	if spec.sentinel != "" {
		// Sentinel rewrites its file; each attempt starts from the text.
		path := filepath.Join(p.dir, sentinelConfFile)
		if err := os.WriteFile(path, []byte(spec.sentinel), 0o600); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if spec.cluster {
		// The bus port defaults to port+10000, which may lie past 65535
		// and is nobody's lease.
		bus, err := leasePort()
		if err != nil {
			return err
		}
		p.busLease = bus
		p.args = append(p.args, "--cluster-port", bus.port)
	}
	if spec.acl != "" {
		path := filepath.Join(p.dir, aclFile)
		if err := os.WriteFile(path, []byte(spec.acl), 0o600); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		p.args = append(p.args, "--aclfile", path)
	}
	return nil
}

// aclFile is the name of a node's ACL file, in its directory.
const aclFile = "users.acl"

// process is one redis-server child process. Its command line is fixed at
// launch, so a restart binds the same port and reads the same directory.
// It holds the leases of its ports from launch until destroy, so that no
// other test takes them while it is killed.
type process struct {
	bin, dir, port string
	args           []string
	// lease holds port; busLease holds the cluster bus port, nil unless
	// cluster mode is on.
	lease, busLease *portLease

	// cmd is the running or last process; nil before the first start.
	cmd *exec.Cmd
	// exited is closed once cmd has exited and been reaped.
	exited chan struct{}
}

func (p *process) addr() string               { return net.JoinHostPort("127.0.0.1", p.port) }
func (p *process) peer() (host, port string)  { return "127.0.0.1", p.port }
func (p *process) logPath() string            { return filepath.Join(p.dir, "redis.log") }
func (p *process) signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// running reports whether the last started process has not exited yet.
func (p *process) running() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// start execs redis-server and waits until INFO server on its port names
// the child's pid: a reply from another server that holds the port (the
// child then exits, "already in use") is no sign of readiness. On error
// the child is killed and the error carries its whole log. A goroutine
// reaps the process; it ends when the process exits, which kill and
// destroy guarantee.
func (p *process) start() error {
	if p.running() {
		return fmt.Errorf("redis-server on %s is already running", p.addr())
	}
	// Errors redis-server prints before it opens its log file (a bad
	// flag, say) go to the same file.
	out, err := os.OpenFile(p.logPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", p.logPath(), err)
	}
	defer out.Close() // the child has its own copy
	cmd := exec.Command(p.bin, p.args...)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // The exit status of a killed server says nothing.
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited

	alive := func() error {
		if p.running() {
			return nil
		}
		return fmt.Errorf("redis-server on %s exited: %s", p.addr(), cmd.ProcessState)
	}
	if err := waitReady(p.addr(), readyTimeout, alive, cmd.Process.Pid); err != nil {
		kerr := p.kill()
		return errors.Join(fmt.Errorf("%w\nredis-server log:\n%s", err, p.log()), kerr)
	}
	return nil
}

// kill sends SIGKILL and waits until the process is reaped.
func (p *process) kill() error {
	if !p.running() {
		return nil
	}
	if err := p.signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill redis-server on %s: %w", p.addr(), err)
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(killTimeout):
		return fmt.Errorf("redis-server on %s (pid %d) still not reaped %v after SIGKILL",
			p.addr(), p.cmd.Process.Pid, killTimeout)
	}
}

// pause stops the process with SIGSTOP.
func (p *process) pause() error { return p.signalRunning("pause", syscall.SIGSTOP) }

// resume continues the process with SIGCONT.
func (p *process) resume() error { return p.signalRunning("resume", syscall.SIGCONT) }

// signalRunning sends sig to the running process, for the action named
// verb: nil on success, an error naming verb and the address when the
// process is not running or the signal fails.
func (p *process) signalRunning(verb string, sig syscall.Signal) error {
	if !p.running() {
		return fmt.Errorf("%s redis-server on %s: not running", verb, p.addr())
	}
	if err := p.signal(sig); err != nil {
		return fmt.Errorf("%s redis-server on %s: %w", verb, p.addr(), err)
	}
	return nil
}

// destroy continues and kills the process, then releases its port leases;
// t.TempDir removes its directory. While the process may still run, its
// leases are kept.
func (p *process) destroy() error {
	if p.running() {
		if err := p.signal(syscall.SIGCONT); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("continue redis-server on %s: %w", p.addr(), err)
		}
		if err := p.kill(); err != nil {
			return err
		}
	}
	return p.releaseLeases()
}

// log returns the server's whole log file, for the error of a failed
// start.
func (p *process) log() string {
	b, err := os.ReadFile(p.logPath())
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return string(b)
}

// clusterBus returns the cluster bus port, empty unless cluster mode is on.
func (p *process) clusterBus() string {
	if p.busLease == nil {
		return ""
	}
	return p.busLease.port
}

// releaseLeases releases the leases of the process's ports; it must not
// run.
func (p *process) releaseLeases() error {
	return errors.Join(p.lease.release(), p.busLease.release())
}
