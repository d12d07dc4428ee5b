package fault

// Points of article 004's stepping stones to getset_timestamp (see
// points.go for the naming scheme).
const (
	// GetSetTimestampMethod2AcquireBeforeGet is reached in method 2's
	// acquire after the SETNX that failed, before the GET.
	GetSetTimestampMethod2AcquireBeforeGet = "getset_timestamp/method2/acquire:before-get"
	// GetSetTimestampMethod2AcquireAfterGet is reached in method 2's
	// acquire after the GET that found the stored time passed, before the
	// DEL: two waiters held here have both seen the lock expired, the
	// article's p2 and p3.
	GetSetTimestampMethod2AcquireAfterGet = "getset_timestamp/method2/acquire:after-get"
	// GetSetTimestampMethod2AcquireAfterDel is reached in method 2's
	// acquire after that DEL, before the second SETNX.
	GetSetTimestampMethod2AcquireAfterDel = "getset_timestamp/method2/acquire:after-del"
)
