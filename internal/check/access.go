package check

import (
	"context"
	"crypto/rand"
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/protocol"
)

//go:embed access.lua
var accessLua string

// scratchTTL is the expiry, in ms, of every key the access check writes.
const scratchTTL = 10000

// refusal is one command the server refused to this user, and why.
type refusal struct {
	cmd    string
	err    string
	script bool // refused inside a script
}

// scratch are the keys and channel the access check writes, under the
// prefix and in one slot that this node serves.
type scratch struct {
	lock, line, fence, channel string
}

// checkAccess connects as the service would and tries what lockzoo does
// under the prefix: each command its techniques send, on a key and a
// channel under the prefix, the commands of lua_release's and redlock's
// scripts inside a script, a SUBSCRIBE, and redlock's CLIENT SETNAME. The
// writes run in one MULTI whose first command sets an expiry and whose last
// deletes the key, so nothing stays, even when the check dies midway.
func checkAccess(ctx context.Context, n *node, prefix string) Finding {
	f := Finding{Addr: n.addr(), Hazard: FamilyAccess, Setting: "ACL: commands, ~" + prefix + "* keys, &" + prefix + "* channels"}
	keys, err := pickScratch(ctx, n, prefix)
	if err != nil {
		return unknown(n, FamilyAccess, f.Setting, err)
	}
	var refused []refusal
	refused = append(refused, tryTransaction(ctx, n, keys)...)
	refused = append(refused, trySubscribe(ctx, n, keys.channel)...)
	refused = append(refused, tryScript(ctx, n, keys)...)
	for _, cmd := range [][]any{{"CLIENT", "GETNAME"}, {"CLIENT", "SETNAME", "lockcompare-check"}} {
		if _, err := redis.DoContext(n.conn, ctx, cmd[0].(string), cmd[1:]...); err != nil {
			refused = append(refused, refusal{cmd: fmt.Sprint(cmd[0], " ", cmd[1]), err: err.Error()})
		}
	}
	if n.infoErr != nil {
		refused = append(refused, refusal{cmd: "INFO", err: n.infoErr.Error()})
	}
	if left := leftovers(ctx, n, keys); left != "" {
		f.Why = left + "; "
	}
	user, err := redis.String(redis.DoContext(n.conn, ctx, "ACL", "WHOAMI"))
	if err != nil {
		user = "unknown (ACL WHOAMI: " + err.Error() + ")"
	}
	if len(refused) == 0 {
		f.Status = OK
		f.Value = fmt.Sprintf("user %s: all tried under %q permitted", user, prefix)
		f.Why = strings.TrimSuffix(f.Why, "; ")
		return f
	}
	f.Value, f.Breaks = summarize(user, refused)
	f.Status = Hazard
	f.Why += "lockzoo cannot take or release a lock with a refused command, key or channel"
	f.Change = fmt.Sprintf("grant the user ~%s* and &%s* and the commands lockzoo sends (+@all, or at least %s, and +@scripting for lua_release and redlock)",
		prefix, prefix, strings.Join(neededCommands(), " "))
	return f
}

// summarize renders the refusals grouped by the server's error, and what
// they break.
func summarize(user string, refused []refusal) (value string, breaks []Break) {
	var order []string
	byErr := map[string][]string{}
	broken := map[string]bool{}
	for _, r := range refused {
		name := r.cmd
		if r.script {
			name += " (in a script)"
		}
		if _, seen := byErr[r.err]; !seen {
			order = append(order, r.err)
		}
		byErr[r.err] = append(byErr[r.err], name)
		for _, t := range refusedFor(r) {
			broken[t] = true
		}
	}
	var parts []string
	for _, e := range order {
		parts = append(parts, strings.Join(byErr[e], ", ")+": "+e)
	}
	value = fmt.Sprintf("user %s: refused %s", user, strings.Join(parts, "; "))
	for _, t := range allTechniques() {
		if broken[t] {
			breaks = append(breaks, Break{Technique: t, Properties: []string{Runs}})
		}
	}
	return value, breaks
}

// refusedFor names the techniques a refusal stops: all of them when a key
// or a channel under the prefix is refused (deniesData), when the node is read-only or out of memory, or for an engine
// command; the scripted techniques for a command refused in a script; the
// techniques that send it otherwise.
func refusedFor(r refusal) []string {
	if deniesData(r.err) || strings.HasPrefix(r.err, "READONLY") || strings.HasPrefix(r.err, "OOM") {
		return allTechniques()
	}
	if r.script {
		return scripted()
	}
	if users := usersOf(strings.Fields(r.cmd)[0]); len(users) > 0 {
		return users
	}
	return allTechniques()
}

// deniesData reports whether a server's error refuses this user a key or
// a channel, as Redis and Valkey word it: NOPERM, or an ACL failure inside
// a script ("can't access" in Redis, "No permissions" in Valkey), about a
// key or a channel. The wording differs between servers and versions
// ("this user has no permissions to access one of the keys", "No
// permissions to access a key"), so only its meaning is matched.
func deniesData(err string) bool {
	e := strings.ToLower(err)
	denied := strings.HasPrefix(err, "NOPERM") || strings.Contains(e, "can't access") || strings.Contains(e, "no permissions")
	return denied && (strings.Contains(e, "key") || strings.Contains(e, "channel"))
}

// pickScratch chooses the scratch keys: a random lock name whose keys
// hash to a slot this node serves, in cluster mode.
func pickScratch(ctx context.Context, n *node, prefix string) (scratch, error) {
	clustered, _ := n.clustered()
	for range 256 {
		keys := protocol.KeysOf(protocol.LockKey(prefix, "lockcompare-check-"+rand.Text()[:10]))
		s := scratch{lock: keys.Lock, line: keys.Line, fence: keys.Fence, channel: protocol.Channel(keys.Lock)}
		if !clustered {
			return s, nil
		}
		view := n.readCluster(ctx)
		if view.err != nil {
			return scratch{}, view.err
		}
		slot, err := keySlot(ctx, n, s.lock)
		if err != nil {
			return scratch{}, err
		}
		if view.serves(slot) {
			return s, nil
		}
		if hasHashTag(prefix) {
			return scratch{}, fmt.Errorf("every key under prefix %q hashes to slot %d, which this node does not serve (see the cluster finding)", prefix, slot)
		}
	}
	return scratch{}, fmt.Errorf("found no key under prefix %q in a slot this node serves", prefix)
}

// tryTransaction runs WATCH, then MULTI with the plain commands on the
// scratch lock, then EXEC and UNWATCH, and returns what was refused.
// A refused command aborts the transaction (EXECABORT): nothing runs.
func tryTransaction(ctx context.Context, n *node, s scratch) []refusal {
	var refused []refusal
	if _, err := redis.DoContext(n.conn, ctx, "WATCH", s.lock); err != nil {
		refused = append(refused, refusal{cmd: "WATCH", err: err.Error()})
	}
	cmds := [][]any{
		{"SET", s.lock, "1", "NX", "PX", scratchTTL}, // the expiry first
		{"GET", s.lock},
		{"SETNX", s.lock, "1"},
		{"GETSET", s.lock, "1"}, // drops the expiry, which the next line sets again
		{"PEXPIRE", s.lock, scratchTTL},
		{"EXPIRE", s.lock, scratchTTL / 1000},
		{"TTL", s.lock},
		{"PUBLISH", s.channel, "lockcompare check"},
		{"DEL", s.lock},
	}
	// MULTI first, alone: were it refused, the commands would run one by
	// one, GETSET's key without an expiry for a moment.
	if _, err := redis.DoContext(n.conn, ctx, "MULTI"); err != nil {
		refused = append(refused, refusal{cmd: "MULTI", err: err.Error()})
		if _, err := redis.DoContext(n.conn, ctx, "UNWATCH"); err != nil {
			refused = append(refused, refusal{cmd: "UNWATCH", err: err.Error()})
		}
		return refused
	}
	for _, c := range cmds {
		if err := n.conn.Send(c[0].(string), c[1:]...); err != nil {
			return append(refused, refusal{cmd: c[0].(string), err: err.Error()})
		}
	}
	if err := n.conn.Send("EXEC"); err != nil {
		return append(refused, refusal{cmd: "EXEC", err: err.Error()})
	}
	if err := n.conn.Flush(); err != nil {
		return append(refused, refusal{cmd: "EXEC", err: err.Error()})
	}
	queued := true
	for _, c := range cmds {
		if _, err := redis.ReceiveContext(n.conn, ctx); err != nil {
			refused = append(refused, refusal{cmd: c[0].(string), err: err.Error()})
			queued = false
		}
	}
	results, err := redis.Values(redis.ReceiveContext(n.conn, ctx))
	switch {
	case err != nil && queued:
		refused = append(refused, refusal{cmd: "EXEC", err: err.Error()})
	case err == nil:
		for i, r := range results {
			if e, ok := r.(redis.Error); ok && i < len(cmds) {
				refused = append(refused, refusal{cmd: cmds[i][0].(string), err: e.Error()})
			}
		}
	}
	if _, err := redis.DoContext(n.conn, ctx, "UNWATCH"); err != nil {
		refused = append(refused, refusal{cmd: "UNWATCH", err: err.Error()})
	}
	return refused
}

// trySubscribe subscribes to channel and unsubscribes on a connection of
// its own, as internal/notify does when a Locker waits. It unsubscribes
// only once subscribed.
func trySubscribe(ctx context.Context, n *node, channel string) []refusal {
	c, err := n.target.dial(ctx)
	if err != nil {
		return []refusal{{cmd: "SUBSCRIBE", err: "dial: " + err.Error()}}
	}
	defer c.Close()
	if _, err := redis.DoContext(c, ctx, "SUBSCRIBE", channel); err != nil {
		// Not subscribed: there is nothing to UNSUBSCRIBE from, and
		// Valkey would answer NOSUB, which refuses nothing.
		return []refusal{{cmd: "SUBSCRIBE", err: err.Error()}}
	}
	if _, err := redis.DoContext(c, ctx, "UNSUBSCRIBE", channel); err != nil && !notSubscribed(err) {
		return []refusal{{cmd: "UNSUBSCRIBE", err: err.Error()}}
	}
	return nil
}

// notSubscribed reports whether err is Valkey's answer to an UNSUBSCRIBE
// on a connection that is not subscribed (NOSUB): not a refusal, and Redis
// answers the same UNSUBSCRIBE with an empty confirmation instead.
func notSubscribed(err error) bool {
	return strings.HasPrefix(err.Error(), "NOSUB")
}

// tryScript runs access.lua (EVALSHA, EVAL on NOSCRIPT).
func tryScript(ctx context.Context, n *node, s scratch) []refusal {
	script := redis.NewScript(3, accessLua)
	reply, err := redis.Strings(script.DoContext(ctx, n.conn, s.lock, s.line, s.fence, s.channel))
	if err != nil {
		return []refusal{{cmd: "EVALSHA", err: err.Error()}}
	}
	var refused []refusal
	for _, r := range reply {
		cmd, e, _ := strings.Cut(r, ": ")
		refused = append(refused, refusal{cmd: cmd, err: e, script: true})
	}
	return refused
}

// leftovers deletes any scratch key left without an expiry (none should
// be) and says what it found; "" when nothing was left.
func leftovers(ctx context.Context, n *node, s scratch) string {
	var left []string
	for _, k := range []string{s.lock, s.line, s.fence} {
		ttl, err := redis.Int(redis.DoContext(n.conn, ctx, "PTTL", k))
		if err != nil || ttl != -1 {
			continue // gone, expiring, or unreadable (then it was never written)
		}
		if _, err := redis.DoContext(n.conn, ctx, "DEL", k); err != nil {
			left = append(left, fmt.Sprintf("left %s without expiry (DEL: %v)", k, err))
		}
	}
	slices.Sort(left)
	return strings.Join(left, "; ")
}
