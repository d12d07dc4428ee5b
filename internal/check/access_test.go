package check

import (
	"slices"
	"testing"

	"github.com/gomodule/redigo/redis"

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
	tests := []struct {
		user    string
		args    []string
		status  Status
		value   string   // the access value contains it
		victims []string // the techniques that cannot run
	}{
		{"confined", byFlags("confined"), OK, "user confined: all tried under \"lock:\" permitted", nil},
		{"nokeys", byURL("nokeys"), Hazard, "no permissions to access one of the keys", allTechniques()},
		{"nochannels", byCLI("nochannels"), Hazard, "PUBLISH, SUBSCRIBE: NOPERM this user has no permissions to access one of the channels", allTechniques()},
		{"noscripts", byFlags("noscripts"), Hazard, "EVALSHA: NOPERM", scripted()},
		{"noclient", byURL("noclient"), Hazard, "CLIENT SETNAME: NOPERM", []string{redlock}},
		{"noconfig", byCLI("noconfig"), OK, "user noconfig: all tried", nil},
		{"nomulti", byFlags("nomulti"), Hazard, "MULTI: NOPERM", allTechniques()},
	}
	for _, tc := range tests {
		t.Run(tc.user, func(t *testing.T) {
			t.Parallel()
			rep, code := runJSON(t, tc.args...)
			f := findingOf(t, rep, node.Addr(), FamilyAccess)
			if f.Status != tc.status {
				t.Errorf("access status = %s, want %s (%+v)", f.Status, tc.status, f)
			}
			mustContain(t, "access value", f.Value, tc.value)
			if got := brokenBy(f, Runs); !slices.Equal(got, tc.victims) {
				t.Errorf("access breaks Runs of %v, want %v", got, tc.victims)
			}
			if tc.status == Hazard && code != ExitHazard {
				t.Errorf("exit status %d, want %d", code, ExitHazard)
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
