package check

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// minVersion is the first Redis with SET's NX and PX options, which every
// technique's engine sends.
func minVersion() version { return version{2, 6, 12} }

// minScriptVersion is the first Redis that replicates a script's effects
// by default, which lets lua_release's and redlock's scripts read TIME
// before they write.
func minScriptVersion() version { return version{5, 0, 0} }

// version is a Redis version, major.minor.patch.
type version [3]int

func (v version) less(w version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

func (v version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// parseVersion reads "7.0.15"; missing parts are 0.
func parseVersion(s string) (version, error) {
	var v version
	parts := strings.SplitN(s, ".", 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return version{}, fmt.Errorf("redis_version %q: not major.minor.patch", s)
		}
		v[i] = n
	}
	return v, nil
}

// serverOf names the server behind n and its own version, from INFO
// server: Valkey reports server_name:valkey and valkey_version beside a
// redis_version it keeps for clients (7.2.4 in Valkey 8); Redis reports
// redis_version alone. It returns "redis" and redisVersion when INFO names
// no other server.
func serverOf(n *node, redisVersion string) (name, ver string) {
	name, err := n.field("server_name")
	if err != nil || name == "" || name == "redis" {
		return "redis", redisVersion
	}
	ver, err = n.field(name + "_version")
	if err != nil {
		return name, "of unknown version"
	}
	return name, ver
}

// describeServer renders the server and its version: "redis 7.0.15", or
// "valkey 8.0.1 (redis_version 7.2.4)" for a server that reports a Redis
// version of its own.
func describeServer(n *node, redisVersion string) string {
	name, ver := serverOf(n, redisVersion)
	if name == "redis" {
		return "redis " + ver
	}
	return fmt.Sprintf("%s %s (redis_version %s)", name, ver, redisVersion)
}

// checkVersion reports the server's version and whether it knows every
// command lockzoo sends (COMMAND INFO: a renamed or disabled command is
// unknown to it). Whether this user may run them is the access check's.
func checkVersion(ctx context.Context, n *node) Finding {
	f := Finding{Addr: n.addr(), Hazard: FamilyVersion, Setting: "server_name, redis_version, COMMAND INFO"}
	text, err := n.field("redis_version")
	if err != nil {
		return unknown(n, FamilyVersion, f.Setting, err)
	}
	v, err := parseVersion(text)
	if err != nil {
		return unknown(n, FamilyVersion, f.Setting, err)
	}
	missing, cmdErr := missingCommands(ctx, n)
	commands := fmt.Sprintf("all %d commands known", len(neededCommands()))
	switch {
	case cmdErr != nil:
		commands = "commands unknown (" + cmdErr.Error() + "; the access check tries them)"
	case len(missing) > 0:
		commands = "unknown commands: " + strings.Join(missing, ", ")
	}
	f.Value = describeServer(n, text) + ", " + commands
	broken := map[string]bool{}
	var why []string
	switch {
	case v.less(minVersion()):
		for _, t := range allTechniques() {
			broken[t] = true
		}
		why = append(why, fmt.Sprintf("SET NX PX needs Redis %v", minVersion()))
	case v.less(minScriptVersion()):
		for _, t := range scripted() {
			broken[t] = true
		}
		why = append(why, fmt.Sprintf("the scripts read TIME before writing, which needs Redis %v", minScriptVersion()))
	}
	for _, cmd := range missing {
		for _, t := range usersOf(cmd) {
			broken[t] = true
		}
	}
	if len(missing) > 0 {
		why = append(why, "the server does not know "+strings.Join(missing, ", ")+" (renamed or disabled)")
	}
	for _, t := range allTechniques() {
		if broken[t] {
			f.Breaks = append(f.Breaks, Break{Technique: t, Properties: []string{Runs}})
		}
	}
	if len(f.Breaks) == 0 {
		f.Status = OK
		return f
	}
	f.Status = Hazard
	f.Why = strings.Join(why, "; ")
	f.Change = fmt.Sprintf("run Redis %v or later (lockzoo is tested on Redis 7.0 and Valkey 8.0) with the commands under their own names (no rename-command)", minScriptVersion())
	return f
}

// missingCommands asks COMMAND INFO about every needed command and returns
// those the server does not know.
func missingCommands(ctx context.Context, n *node) ([]string, error) {
	names := neededCommands()
	args := make([]any, 0, len(names)+1)
	args = append(args, "INFO")
	for _, c := range names {
		args = append(args, c)
	}
	reply, err := redis.Values(redis.DoContext(n.conn, ctx, "COMMAND", args...))
	if err != nil {
		return nil, fmt.Errorf("COMMAND INFO refused: %w", err)
	}
	if len(reply) != len(names) {
		return nil, fmt.Errorf("COMMAND INFO: %d replies for %d commands", len(reply), len(names))
	}
	var missing []string
	for i, r := range reply {
		if r == nil {
			missing = append(missing, names[i])
		}
	}
	return missing, nil
}
