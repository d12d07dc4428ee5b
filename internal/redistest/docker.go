package redistest

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	dc "github.com/ory/dockertest/v3/docker"
)

// dockerReadyTimeout bounds the wait for a started container to be ready.
const dockerReadyTimeout = 10 * time.Second

// redisPort is the port Redis listens on inside its container.
const redisPort = "6379"

// dockerDataDir is the working directory of Redis in both images, where an
// ACL file is put.
const dockerDataDir = "/data"

// Labels put on every container, so leftovers can be found.
const (
	labelTest     = "lockzoo.test"
	labelTestName = "lockzoo.test.name"
)

func (b *dockerBackend) name() string     { return backendDocker }
func (b *dockerBackend) describe() string { return "image " + b.image + ", " + b.server }

// launch creates and starts a container whose Redis port is published on a
// leased 127.0.0.1 port, and tries another port when that one was bound
// meanwhile by a program that takes no leases.
func (b *dockerBackend) launch(spec serverSpec) (server, error) {
	if spec.cluster {
		// StartCluster uses the process backend; see the package doc.
		return nil, errors.New("the docker backend does not run cluster nodes")
	}
	if spec.sentinel != "" {
		return b.launchSentinel(spec)
	}
	flags := append(redisFlags(redisPort, spec), "--bind", "0.0.0.0")
	if spec.acl != "" {
		flags = append(flags, "--aclfile", dockerDataDir+"/"+aclFile)
	}
	var err error
	for range launchAttempts {
		var lease *portLease
		if lease, err = leasePort(); err != nil {
			return nil, err
		}
		var c *container
		if c, err = b.create(lease, b.announceFlags(flags, lease.port, spec)); err != nil {
			return nil, errors.Join(err, lease.release())
		}
		if spec.acl != "" {
			if err = c.upload(aclFile, spec.acl); err != nil {
				return nil, errors.Join(err, c.destroy())
			}
		}
		if err = c.start(); err == nil {
			return c, nil
		}
		if derr := c.destroy(); derr != nil || !portTaken(err) {
			return nil, errors.Join(err, derr)
		}
	}
	return nil, fmt.Errorf("no free port after %d attempts: %w", launchAttempts, err)
}

// create creates (but does not start) a container running the server
// program (redis-server, or LOCKZOO_REDIS_SERVER's base name) with
// flags, its port published on the leased port of 127.0.0.1 and of the
// bridge gateway; the container takes the lease over (destroy releases
// it). The entrypoint is set explicitly so that the official image and
// lockzoo/redis:local behave alike.
func (b *dockerBackend) create(lease *portLease, flags []string) (*container, error) {
	hostPort := lease.port
	port := dc.Port(redisPort + "/tcp")
	created, err := b.client.CreateContainer(dc.CreateContainerOptions{
		Config: &dc.Config{
			Image:        b.image,
			Entrypoint:   []string{b.server},
			Cmd:          flags,
			ExposedPorts: map[dc.Port]struct{}{port: {}},
			Labels:       map[string]string{labelTest: "1", labelTestName: b.testName},
		},
		HostConfig: &dc.HostConfig{
			PortBindings: map[dc.Port][]dc.PortBinding{port: {
				{HostIP: "127.0.0.1", HostPort: hostPort},
				{HostIP: b.gateway, HostPort: hostPort},
			}},
			RestartPolicy: dc.NeverRestart(),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("create container from %s: %w", b.image, err)
	}
	return &container{client: b.client, id: created.ID, hostPort: hostPort, gateway: b.gateway, lease: lease}, nil
}

// portTaken reports whether err says the host port was already bound.
func portTaken(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "port is already allocated") ||
		strings.Contains(msg, "address already in use")
}

// container is one Redis container. Kill and start keep the container, and
// so its published port, whose lease it holds until destroy, and its file
// system (the append-only file).
type container struct {
	client            *dc.Client
	id                string
	hostPort, gateway string
	lease             *portLease
}

func (c *container) addr() string              { return net.JoinHostPort("127.0.0.1", c.hostPort) }
func (c *container) peer() (host, port string) { return c.gateway, c.hostPort }

// start starts the container and waits until Redis answers INFO and PING
// through the published port (the engine refuses to start a container
// whose host port another program holds, so any reply there is Redis's).
func (c *container) start() error {
	if err := c.client.StartContainer(c.id, nil); err != nil {
		return fmt.Errorf("start container %.12s: %w", c.id, err)
	}
	alive := func() error {
		info, err := c.client.InspectContainer(c.id)
		if err != nil {
			return fmt.Errorf("inspect container %.12s: %w", c.id, err)
		}
		if !info.State.Running {
			return fmt.Errorf("container %.12s stopped: %s", c.id, info.State.String())
		}
		return nil
	}
	if err := waitReady(c.addr(), dockerReadyTimeout, alive, 0); err != nil {
		return fmt.Errorf("%w\ncontainer log:\n%s", err, c.logTail())
	}
	return nil
}

// kill thaws the container if it is paused, sends SIGKILL and waits until
// the container has stopped.
func (c *container) kill() error {
	info, err := c.client.InspectContainer(c.id)
	if err != nil {
		return fmt.Errorf("inspect container %.12s: %w", c.id, err)
	}
	if !info.State.Running {
		return nil
	}
	if info.State.Paused {
		if err := c.resume(); err != nil {
			return err
		}
	}
	err = c.client.KillContainer(dc.KillContainerOptions{ID: c.id, Signal: dc.SIGKILL})
	var notRunning *dc.ContainerNotRunning
	if err != nil && !errors.As(err, &notRunning) {
		return fmt.Errorf("kill container %.12s: %w", c.id, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	if _, err := c.client.WaitContainerWithContext(c.id, ctx); err != nil {
		return fmt.Errorf("wait for container %.12s to stop: %w", c.id, err)
	}
	return nil
}

// pause freezes the container's processes (docker pause).
func (c *container) pause() error {
	if err := c.client.PauseContainer(c.id); err != nil {
		return fmt.Errorf("pause container %.12s: %w", c.id, err)
	}
	return nil
}

// resume thaws the container's processes (docker unpause).
func (c *container) resume() error {
	if err := c.client.UnpauseContainer(c.id); err != nil {
		return fmt.Errorf("unpause container %.12s: %w", c.id, err)
	}
	return nil
}

// destroy thaws the container, removes it with its volumes and then
// releases the lease of its port.
func (c *container) destroy() error {
	_ = c.client.UnpauseContainer(c.id) // Fails unless paused, which is fine.
	err := c.client.RemoveContainer(dc.RemoveContainerOptions{ID: c.id, Force: true, RemoveVolumes: true})
	var gone *dc.NoSuchContainer
	if err != nil && !errors.As(err, &gone) {
		return fmt.Errorf("remove container %.12s: %w", c.id, err)
	}
	return c.lease.release()
}

// upload writes a file named name holding content into dockerDataDir of
// the container, which must not have started yet.
func (c *container) upload(name, content string) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), ModTime: time.Now()}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("tar %s: %w", name, err)
	}
	if _, err := tw.Write([]byte(content)); err != nil {
		return fmt.Errorf("tar %s: %w", name, err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("tar %s: %w", name, err)
	}
	err := c.client.UploadToContainer(c.id, dc.UploadToContainerOptions{InputStream: &buf, Path: dockerDataDir})
	if err != nil {
		return fmt.Errorf("copy %s into container %.12s: %w", name, c.id, err)
	}
	return nil
}

// logTail returns the last lines the container printed, for error messages.
func (c *container) logTail() string {
	var buf bytes.Buffer
	err := c.client.Logs(dc.LogsOptions{
		Container:    c.id,
		OutputStream: &buf,
		ErrorStream:  &buf,
		Stdout:       true,
		Stderr:       true,
		Tail:         "40",
	})
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return buf.String()
}
