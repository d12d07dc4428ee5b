package fault

// Extra points of watch_multi (see points.go for the naming scheme).
const (
	// WatchMultiExtendAfterWatch is the extend twin of
	// WatchMultiReleaseAfterWatch: reached on every pass of watch_multi's
	// extend transaction after WATCH and GET, before MULTI PEXPIRE EXEC.
	WatchMultiExtendAfterWatch = "watch_multi/extend:after-watch"
)
