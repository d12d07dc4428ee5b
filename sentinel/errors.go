package sentinel

import "errors"

// Sentinel errors. Every error a Pool returns for one of these conditions
// wraps the matching sentinel, so callers test with errors.Is; a closed
// Pool's errors wrap strategy.ErrClosed, and bad arguments to New wrap
// strategy.ErrInvalidConfig.
var (
	// ErrUnknownMaster reports that the Sentinels that answered do not
	// monitor the master name given to New (SENTINEL
	// GET-MASTER-ADDR-BY-NAME answered nil).
	ErrUnknownMaster = errors.New("lockzoo: unknown master name")

	// ErrNoSentinel reports that no Sentinel answered: each was down,
	// unreachable, refused the credentials, or did not answer in time.
	ErrNoSentinel = errors.New("lockzoo: no sentinel answered")

	// ErrNotMaster reports that the node the Sentinels name as the
	// master answers ROLE as something else (a replica), and asking the
	// Sentinels again named no other: a misconfigured deployment, or a
	// failover whose news has not reached the Sentinels asked.
	ErrNotMaster = errors.New("lockzoo: not a master")
)
