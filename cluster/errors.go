package cluster

import "errors"

// Sentinel errors. Every error this package returns for one of these
// situations wraps the sentinel (errors.Is) and names what went wrong.
var (
	// ErrNotCluster: a seed answered, but not as a Redis Cluster node
	// (cluster support disabled), or no seed gave a slot map.
	ErrNotCluster = errors.New("lockzoo: not a Redis Cluster")
	// ErrClusterDown: a node replied CLUSTERDOWN, the cluster is not
	// serving commands (cluster_state:fail).
	ErrClusterDown = errors.New("lockzoo: the Redis Cluster is down")
	// ErrSlotUnserved: no master serves the key's slot (CLUSTERDOWN Hash
	// slot not served, or none in the slot map).
	ErrSlotUnserved = errors.New("lockzoo: no master serves the key's hash slot")
	// ErrRedirected: a command was redirected (MOVED, ASK, TRYAGAIN) more
	// times than a slot move explains.
	ErrRedirected = errors.New("lockzoo: too many cluster redirections")
)
