package redistest

import (
	"errors"
	"fmt"
)

// announceFlags returns flags with, when spec asks for it, the flags that
// make a server in a container announce its peer address (the bridge
// gateway and hostPort) as a replica: the address its container has on
// the bridge is reachable neither from the host nor after a restart.
func (b *dockerBackend) announceFlags(flags []string, hostPort string, spec serverSpec) []string {
	if !spec.announce {
		return flags
	}
	return append(flags[:len(flags):len(flags)],
		"--replica-announce-ip", b.gateway, "--replica-announce-port", hostPort)
}

// launchSentinel creates and starts a container running a Sentinel with
// spec's sentinel.conf, copied into dockerDataDir, which announces its
// peer address to the other Sentinels; it tries another port when the one
// leased was taken. It takes spec.lease over, as launch does.
func (b *dockerBackend) launchSentinel(spec serverSpec) (server, error) {
	var err error
	for range launchAttempts {
		var lease *portLease
		if lease, err = spec.portLease(); err != nil {
			return nil, err
		}
		flags := append(sentinelFlags(dockerDataDir+"/"+sentinelConfFile, redisPort), "--bind", "0.0.0.0")
		var c *container
		if c, err = b.create(lease, flags); err != nil {
			return nil, errors.Join(err, lease.release())
		}
		conf := spec.sentinel + fmt.Sprintf("sentinel announce-ip %s\nsentinel announce-port %s\n", b.gateway, lease.port)
		if err = c.upload(sentinelConfFile, conf); err != nil {
			return nil, errors.Join(err, c.destroy())
		}
		if err = c.start(); err == nil {
			return c, nil
		}
		if derr := c.destroy(); derr != nil || spec.lease != nil || !portTaken(err) {
			return nil, errors.Join(err, derr)
		}
	}
	return nil, fmt.Errorf("no free port after %d attempts: %w", launchAttempts, err)
}
