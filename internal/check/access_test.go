package check

import (
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"

	"github.com/lockzoo/lockzoo/internal/redistest"
)

// TestAccess starts one node with an ACL user per case, each missing one
// right lockzoo needs (or none), connects as that user (through each of the
// auth flags) and asserts the access finding.
func TestAccess(t *testing.T) {
	t.Parallel()
	users := []redistest.ACLUser{
		{Name: "confined", Rules: "on >pw resetchannels ~lock:* &lock:* +@all"},
		{Name: "nokeys", Rules: "on >pw resetchannels ~other:* &lock:* +@all"},
		{Name: "nochannels", Rules: "on >pw resetchannels ~lock:* +@all"},
		{Name: "noscripts", Rules: "on >pw resetchannels ~lock:* &lock:* +@all -@scripting"},
		{Name: "noclient", Rules: "on >pw resetchannels ~lock:* &lock:* +@all -client"},
		{Name: "noconfig", Rules: "on >pw resetchannels ~lock:* &lock:* +@all -config"},
		{Name: "nomulti", Rules: "on >pw resetchannels ~lock:* &lock:* +@all -multi"},
	}
	node := redistest.Start(t, 1, redistest.WithPersistence(), redistest.WithACL(users...))[0]
	byFlags := func(user string) []string { return []string{"-addrs", node.Addr(), "-user", user, "-pass", "pw"} }
	byURL := func(user string) []string { return []string{"-addrs", "redis://" + user + ":pw@" + node.Addr()} }
	byCLI := func(user string) []string {
		return []string{"-u", "redis://" + node.Addr(), "--user", user, "-a", "pw"}
	}
	// Redis and Valkey word their refusals differently ("this user has no
	// permissions to access one of the keys", "No permissions to access a
	// key"): the cases assert what was refused and why (NOPERM, about a
	// key or a channel), not the wording.
	tests := []struct {
		user    string
		args    []string
		status  Status
		value   string   // the access value contains it
		about   string   // a NOPERM refusal is about this ("key", "channel"), case aside; "" for none
		absent  []string // the access value holds none of these
		victims []string // the techniques that cannot run
	}{
		{user: "confined", args: byFlags("confined"), status: OK, value: "user confined: all tried under \"lock:\" permitted"},
		{user: "nokeys", args: byURL("nokeys"), status: Hazard, value: "GET, SETNX, GETSET, PEXPIRE, EXPIRE, TTL, DEL, EVALSHA: NOPERM", about: "key", victims: allTechniques()},
		// SUBSCRIBE refused leaves nothing to UNSUBSCRIBE from: Valkey
		// answers that UNSUBSCRIBE with NOSUB, which refuses nothing.
		{user: "nochannels", args: byCLI("nochannels"), status: Hazard, value: "PUBLISH, SUBSCRIBE: NOPERM", about: "channel",
			absent: []string{"UNSUBSCRIBE", "NOSUB"}, victims: allTechniques()},
		{user: "noscripts", args: byFlags("noscripts"), status: Hazard, value: "EVALSHA: NOPERM", victims: scripted()},
		{user: "noclient", args: byURL("noclient"), status: Hazard, value: "CLIENT SETNAME: NOPERM", victims: []string{redlock}},
		{user: "noconfig", args: byCLI("noconfig"), status: OK, value: "user noconfig: all tried"},
		{user: "nomulti", args: byFlags("nomulti"), status: Hazard, value: "MULTI: NOPERM", victims: allTechniques()},
	}
	for _, tc := range tests {
		t.Run(tc.user, func(t *testing.T) {
			t.Parallel()
			rep, code := runJSON(t, tc.args...)
			f := findingOf(t, rep, node.Addr(), FamilyAccess)
			assert.Equal(t, tc.status, f.Status, "access status (%+v)", f)
			assert.Contains(t, f.Value, tc.value, "access value")
			if tc.about != "" {
				_, reason, _ := strings.Cut(f.Value, tc.value)
				reason, _, _ = strings.Cut(reason, ";")
				assert.Contains(t, strings.ToLower(reason), tc.about, "access value %q: the NOPERM after %q, want it about a %s", f.Value, tc.value, tc.about)
			}
			for _, a := range tc.absent {
				assert.NotContains(t, f.Value, a, "access value")
			}
			assert.Equal(t, tc.victims, brokenBy(f, Runs), "techniques whose Runs the access finding breaks")
			if tc.status == Hazard {
				assert.Equal(t, ExitHazard, code, "exit status")
			}
		})
	}
	t.Cleanup(func() { assertEmpty(t, node) })
}

// TestWrongPassword: authentication that fails means the check cannot
// run.
func TestWrongPassword(t *testing.T) {
	t.Parallel()
	node := redistest.Start(t, 1, redistest.WithACL(redistest.ACLUser{Name: "app", Rules: "on >pw ~* &* +@all"}))[0]
	rep, code := runJSON(t, "-addrs", node.Addr(), "-user", "app", "-pass", "wrong")
	if code != ExitCannot || len(rep.Unreachable) != 1 {
		t.Fatalf("exit status %d, unreachable %q; want %d and one entry", code, rep.Unreachable, ExitCannot)
	}
	mustContain(t, "unreachable", rep.Unreachable[0], "WRONGPASS")
}

// TestRefusedReads connects as users that may not run CONFIG GET, INFO or
// either: what they hide is unknown, with the server's reason, and what
// the other command reports exactly is still read.
func TestRefusedReads(t *testing.T) {
	t.Parallel()
	users := []redistest.ACLUser{
		{Name: "noconfig", Rules: "on >pw resetchannels ~lock:* &lock:* +@all -config"},
		{Name: "noinfo", Rules: "on >pw resetchannels ~lock:* &lock:* +@all -info"},
		{Name: "neither", Rules: "on >pw resetchannels ~lock:* &lock:* +@all -config -info"},
	}
	node := redistest.Start(t, 1, redistest.WithPersistence(), redistest.WithACL(users...))[0]
	families := []string{FamilyEviction, FamilyPersistence, FamilyReplication, FamilyVersion, FamilyCluster, FamilyAccess}
	tests := []struct {
		user string
		want []Status // per family, in the order above
		why  string   // the first unknown's reason contains it
		exit int
	}{
		// maxmemory and its policy from INFO memory, appendonly from
		// aof_enabled, but appendfsync only from CONFIG GET.
		{"noconfig", []Status{OK, Unknown, OK, OK, OK, OK}, "CONFIG GET appendfsync refused: NOPERM", ExitClean},
		// redlock's restart guard reads INFO server: access breaks it.
		{"noinfo", []Status{OK, OK, Unknown, Unknown, Unknown, Hazard}, "INFO: NOPERM", ExitHazard},
		{"neither", []Status{Unknown, Unknown, Unknown, Unknown, Unknown, Hazard}, "CONFIG GET maxmemory-policy refused: NOPERM", ExitHazard},
	}
	for _, tc := range tests {
		t.Run(tc.user, func(t *testing.T) {
			t.Parallel()
			rep, code := runJSON(t, "-addrs", node.Addr(), "-user", tc.user, "-pass", "pw")
			why := ""
			for i, fam := range families {
				f := findingOf(t, rep, node.Addr(), fam)
				if f.Status != tc.want[i] {
					t.Errorf("%s = %+v, want status %s", fam, f, tc.want[i])
				}
				if f.Status == Unknown && why == "" {
					why = f.Why
					if f.Value != "unknown" {
						t.Errorf("%s value = %q, want \"unknown\"", fam, f.Value)
					}
				}
			}
			mustContain(t, "first unknown's reason", why, tc.why)
			if code != tc.exit {
				t.Errorf("exit status %d, want %d", code, tc.exit)
			}
		})
	}
}

// TestNothingWithoutExpiry: a user that may write but neither delete nor
// set an expiry leaves, at most, keys that expire.
func TestNothingWithoutExpiry(t *testing.T) {
	t.Parallel()
	node := redistest.Start(t, 1, redistest.WithACL(redistest.ACLUser{
		Name: "app", Rules: "on >pw resetchannels ~lock:* &lock:* +@all -del -unlink -pexpire -expire",
	}))[0]
	rep, code := runJSON(t, "-addrs", node.Addr(), "-user", "app", "-pass", "pw")
	f := findingOf(t, rep, node.Addr(), FamilyAccess)
	if f.Status != Hazard || code != ExitHazard {
		t.Errorf("access = %+v, exit %d; want a hazard, exit %d", f, code, ExitHazard)
	}
	mustContain(t, "access value", f.Value, "DEL")
	keys, err := redis.Strings(node.Do("KEYS", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if ttl, err := redis.Int(node.Do("PTTL", k)); err != nil || ttl <= 0 {
			t.Errorf("key %q left with PTTL %d (%v), want an expiry", k, ttl, err)
		}
	}
	t.Logf("left %d key(s), each with an expiry: %q", len(keys), keys)
}

// TestDeniesData reads both servers' refusals of a key or a channel, in
// commands and in scripts, by their meaning.
func TestDeniesData(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  string
		want bool
	}{
		{"NOPERM this user has no permissions to access one of the keys used as arguments", true}, // Redis 7.0
		{"NOPERM No permissions to access a key", true},                                           // Valkey 8.0
		{"NOPERM this user has no permissions to access one of the channels used as arguments", true},
		{"NOPERM No permissions to access a channel", true},
		{"ERR The user executing the script can't access at least one of the keys mentioned in the script", true},
		{"ERR ACL failure in script: No permissions to access a channel", true},
		{"NOPERM this user has no permissions to run the 'evalsha' command", false},
		{"NOPERM User noscripts has no permissions to run the 'evalsha' command", false},
		{"NOSUB 'unsubscribe' command executed not in subscribed mode", false},
	}
	for _, tc := range tests {
		t.Run(tc.err, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, deniesData(tc.err), "deniesData(%q)", tc.err)
		})
	}
}
