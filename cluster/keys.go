package cluster

import (
	"fmt"
	"strconv"
	"strings"
)

// isUnkeyed reports whether the command name (upper case) names no key:
// a connection sends it to the node of its last keyed command (so MULTI
// and EXEC follow WATCH), or to any master before that.
func isUnkeyed(name string) bool {
	switch name {
	case "", "ASKING", "AUTH", "BGSAVE", "CLIENT", "CLUSTER", "COMMAND", "CONFIG",
		"DBSIZE", "DEBUG", "DISCARD", "ECHO", "EXEC", "FLUSHALL", "FLUSHDB",
		"FUNCTION", "HELLO", "INFO", "LASTSAVE", "LATENCY", "MEMORY", "MULTI",
		"PING", "PUBSUB", "QUIT", "RANDOMKEY", "READONLY", "READWRITE", "RESET",
		"ROLE", "SAVE", "SCRIPT", "SELECT", "SLOWLOG", "TIME", "UNWATCH", "WAIT":
		return true
	}
	return false
}

// upper returns name in upper case, without allocating when it is already.
func upper(name string) string {
	for i := 0; i < len(name); i++ {
		if c := name[i]; 'a' <= c && c <= 'z' {
			return strings.ToUpper(name)
		}
	}
	return name
}

// keyOf returns the key (or shard channel) whose slot decides where the
// command name (upper case) with args goes, and false for a command with
// none: the first key of a script (EVAL, EVALSHA, FCALL and their _RO
// forms; none when it has no keys), the channel of SPUBLISH, PUBLISH and
// SSUBSCRIBE, and the first argument of any other command not in
// unkeyed. Every key of one command must share its slot, as Redis
// Cluster requires.
func keyOf(name string, args []any) (string, bool) {
	switch name {
	case "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO":
		if len(args) < 3 {
			return "", false
		}
		if n, err := strconv.Atoi(argString(args[1])); err != nil || n < 1 {
			return "", false
		}
		return argString(args[2]), true
	}
	if len(args) == 0 || isUnkeyed(name) {
		return "", false
	}
	return argString(args[0]), true
}

// argString is an argument as Redis receives it.
func argString(a any) string {
	switch v := a.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return fmt.Sprint(a)
}
