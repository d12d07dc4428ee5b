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

// launch starts redis-server on a free port in a fresh directory, and tries
// another port when the chosen one was taken in the meantime.
func (b *processBackend) launch(spec serverSpec) (server, error) {
	dir := b.dir()
	var err error
	for range launchAttempts {
		port := spec.port
		if port == "" {
			if port, err = freePort(); err != nil {
				return nil, err
			}
		}
		p := &process{bin: b.bin, dir: dir, port: port}
		if spec.sentinel != "" {
			p.args = sentinelFlags(filepath.Join(dir, sentinelConfFile), port)
		} else {
			p.args = redisFlags(port, spec)
		}
		p.args = append(p.args, "--bind", "127.0.0.1", "--dir", dir, "--logfile", p.logPath())
		if err = p.prepare(spec); err != nil {
			return nil, err
		}
		if err = p.start(); err == nil {
			return p, nil
		}
		if spec.port != "" || !strings.Contains(p.logTail(), "already in use") {
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
		// The bus port defaults to port+10000, which may lie past 65535.
		bus, err := freePort()
		if err != nil {
			return err
		}
		p.bus = bus
		p.args = append(p.args, "--cluster-port", bus)
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
type process struct {
	bin, dir, port string
	// bus is the cluster bus port; empty unless cluster mode is on.
	bus  string
	args []string

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

// start execs redis-server and waits until it answers PING. A goroutine
// reaps the process; it ends when the process exits, which kill and destroy
// guarantee.
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
	if err := waitReady(p.addr(), readyTimeout, alive); err != nil {
		kerr := p.kill()
		return errors.Join(fmt.Errorf("%w\nredis-server log:\n%s", err, p.logTail()), kerr)
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
func (p *process) pause() error {
	if !p.running() {
		return fmt.Errorf("pause redis-server on %s: not running", p.addr())
	}
	if err := p.signal(syscall.SIGSTOP); err != nil {
		return fmt.Errorf("pause redis-server on %s: %w", p.addr(), err)
	}
	return nil
}

// resume continues the process with SIGCONT.
func (p *process) resume() error {
	if !p.running() {
		return fmt.Errorf("resume redis-server on %s: not running", p.addr())
	}
	if err := p.signal(syscall.SIGCONT); err != nil {
		return fmt.Errorf("resume redis-server on %s: %w", p.addr(), err)
	}
	return nil
}

// destroy continues and kills the process; t.TempDir removes its directory.
func (p *process) destroy() error {
	if !p.running() {
		return nil
	}
	if err := p.signal(syscall.SIGCONT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("continue redis-server on %s: %w", p.addr(), err)
	}
	return p.kill()
}

// logTail returns the end of the server's log file, for error messages.
func (p *process) logTail() string {
	const max = 4 << 10
	b, err := os.ReadFile(p.logPath())
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

// clusterBus returns the cluster bus port, empty unless cluster mode is on.
func (p *process) clusterBus() string { return p.bus }
