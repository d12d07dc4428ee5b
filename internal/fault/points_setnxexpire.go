package fault

// Extra points of setnx_expire (see points.go for the naming scheme).
const (
	// SetNXExpireExtendAfterWatch is the extend twin of
	// SetNXExpireReleaseAfterWatch: reached on every pass of setnx_expire's
	// extend transaction after WATCH and the GET that matched the token,
	// before MULTI EXPIRE EXEC.
	SetNXExpireExtendAfterWatch = "setnx_expire/extend:after-watch"
)
