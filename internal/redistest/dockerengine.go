package redistest

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"
)

// enginePingTimeout bounds the check that a Docker engine answers.
const enginePingTimeout = 2 * time.Second

// dockerBackend runs each node in a container of one image.
//
// Each container publishes Redis on the same free host port at two
// addresses: 127.0.0.1, for the test, and the host's address on Docker's
// default bridge (the gateway), for replicas in other containers. Unlike
// the container's own bridge address, which Docker may hand to another
// container after a kill, the published port stays with the container, so a
// replica follows its master across Kill and Restart and never reaches
// another test's server.
type dockerBackend struct {
	client   *dc.Client
	image    string
	server   string // the program run in each container, e.g. "valkey-server"
	gateway  string
	testName string
}

// newDockerBackend connects to the engine dockertest finds (DOCKER_HOST or
// the default socket), checks that it answers and picks the image; see
// resolveImage for allowPull.
func newDockerBackend(testName string, allowPull bool) (*dockerBackend, error) {
	pool, err := dockertest.NewPool("")
	if err != nil {
		return nil, fmt.Errorf("docker engine: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), enginePingTimeout)
	defer cancel()
	if err := pool.Client.PingWithContext(ctx); err != nil {
		return nil, fmt.Errorf("docker engine does not answer: %w", err)
	}
	server := filepath.Base(serverProgram())
	image, err := resolveImage(pool.Client, server, allowPull)
	if err != nil {
		return nil, err
	}
	gateway, err := bridgeGateway(pool.Client)
	if err != nil {
		return nil, err
	}
	return &dockerBackend{client: pool.Client, image: image, server: server, gateway: gateway, testName: testName}, nil
}

// bridgeGateway returns the host's IPv4 address on Docker's default bridge
// network: the configured gateway, else the first address of the subnet,
// which is where Docker puts the bridge by default.
func bridgeGateway(client *dc.Client) (string, error) {
	nw, err := client.NetworkInfo("bridge")
	if err != nil {
		return "", fmt.Errorf("inspect docker network bridge: %w", err)
	}
	for _, cfg := range nw.IPAM.Config {
		if gw, err := netip.ParseAddr(cfg.Gateway); err == nil && gw.Is4() {
			return gw.String(), nil
		}
		if subnet, err := netip.ParsePrefix(cfg.Subnet); err == nil && subnet.Addr().Is4() {
			return subnet.Masked().Addr().Next().String(), nil
		}
	}
	return "", fmt.Errorf("docker network bridge has no IPv4 subnet: %+v", nw.IPAM.Config)
}

// pullTimeout bounds pulling an image that is not present locally.
const pullTimeout = 2 * time.Minute

// errNoLocalImage says that an engine answers but holds no usable image.
var errNoLocalImage = errors.New("no Redis image present locally")

// resolveImage returns the image to run server in: the one
// LOCKZOO_REDIS_IMAGE names, else the first of server's official and local
// images (imagesFor) present locally. When none is present it pulls
// (LOCKZOO_REDIS_IMAGE or the official image) if allowed, and otherwise
// returns errNoLocalImage.
func resolveImage(client *dc.Client, server string, allowPull bool) (string, error) {
	want := os.Getenv(envImage)
	officialImage, localImage := imagesFor(server)
	candidates := []string{localImage}
	if officialImage != "" {
		candidates = []string{officialImage, localImage}
	}
	if want != "" {
		candidates = []string{want}
	}
	for _, image := range candidates {
		_, err := client.InspectImage(image)
		if err == nil {
			return image, nil
		}
		if !errors.Is(err, dc.ErrNoSuchImage) {
			return "", fmt.Errorf("inspect image %s: %w", image, err)
		}
	}
	if !allowPull {
		return "", errNoLocalImage
	}
	image := candidates[0]
	if err := pullImage(client, image); err != nil {
		if want != "" {
			return "", fmt.Errorf("%s=%s: not present locally and %w", envImage, want, err)
		}
		return "", fmt.Errorf("no image for %s: run `make redis-image %s=%s` (builds %s from the host's %s) or set %s: %w",
			server, envServer, server, localImage, server, envImage, err)
	}
	return image, nil
}

// pullImage pulls image from its registry.
func pullImage(client *dc.Client, image string) error {
	ctx, cancel := context.WithTimeout(context.Background(), pullTimeout)
	defer cancel()
	repo, tag := dc.ParseRepositoryTag(image)
	if tag == "" {
		tag = "latest"
	}
	err := client.PullImage(dc.PullImageOptions{Repository: repo, Tag: tag, Context: ctx}, dc.AuthConfiguration{})
	if err != nil {
		return fmt.Errorf("pull %s: %w", image, err)
	}
	return nil
}
