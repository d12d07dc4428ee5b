package fault

// The named fault points. Each names the technique folder, the operation and
// the window, e.g. "set_nx_ex/release:after-get" is the moment between the
// GET that matched and the DEL.
const (
	SetNXExpireAcquireAfterSetNX       = "setnx_expire/acquire:after-setnx"
	SetNXExpireReleaseAfterWatch       = "setnx_expire/release:after-watch"
	GetSetTimestampAcquireBeforeGet    = "getset_timestamp/acquire:before-get"
	GetSetTimestampAcquireBeforeGetSet = "getset_timestamp/acquire:before-getset"
	GetSetTimestampReleaseAfterCheck   = "getset_timestamp/release:after-check"
	WatchMultiReleaseAfterWatch        = "watch_multi/release:after-watch"
	SetNXExReleaseAfterGet             = "set_nx_ex/release:after-get"
	SetNXExExtendAfterGet              = "set_nx_ex/extend:after-get"
)

// Generic points the engine marks for every technique built on it.
const (
	// AcquireAfter is reached after a successful acquire, before the lease
	// is handed to the caller: a Crash here is a holder that dies holding
	// the lock.
	AcquireAfter = "engine/acquire:after"
	// ReleaseBefore is reached before Unlock sends anything: a Gate here
	// holds a client that is about to release.
	ReleaseBefore = "engine/release:before"
	// ExtendBefore is reached before Extend sends anything.
	ExtendBefore = "engine/extend:before"
)
