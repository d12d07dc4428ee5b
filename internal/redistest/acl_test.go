package redistest

import (
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

func TestACL(t *testing.T) {
	t.Parallel()
	app := ACLUser{Name: "app", Rules: "on >pw resetchannels ~app:* &app:* +@all"}
	node := Start(t, 1, WithACL(app))[0]
	checkBackend(t, node)
	// The harness's own connections keep every right.
	mustDo(t, node, "SET", "other:x", "1")

	pool := node.PoolAs("app", "pw")
	if node.PoolAs("app", "pw") == pool {
		t.Error("PoolAs returned the same pool twice, want a new one per call")
	}
	tests := []struct {
		name    string
		cmd     string
		args    []any
		wantErr string // prefix of the error; empty for success
	}{
		{"own key", "SET", []any{"app:x", "1"}, ""},
		{"own channel", "PUBLISH", []any{"app:c", ""}, ""},
		{"other key", "SET", []any{"other:x", "2"}, "NOPERM"},
		{"other key read", "GET", []any{"other:x"}, "NOPERM"},
		{"other channel", "PUBLISH", []any{"other:c", ""}, "NOPERM"},
		{"script on other key", "EVAL", []any{"return redis.call('GET', KEYS[1])", 1, "other:x"}, "NOPERM"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := pool.Get()
			defer c.Close()
			_, err := c.Do(tc.cmd, tc.args...)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("%s %v as app = %v, want success", tc.cmd, tc.args, err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Errorf("%s %v as app = %v, want an error starting %q", tc.cmd, tc.args, err, tc.wantErr)
			}
		})
	}
	if v, _ := getString(t, node, "other:x"); v != "1" {
		t.Errorf("GET other:x = %q, want \"1\" (the confined user must not have written it)", v)
	}
	if v, _ := getString(t, node, "app:x"); v != "1" {
		t.Errorf("GET app:x = %q, want \"1\"", v)
	}
	users, err := redis.Strings(node.Do("ACL", "USERS"))
	if err != nil || strings.Join(users, ",") != "app,default" {
		t.Errorf("ACL USERS = %q, %v; want [app default]", users, err)
	}

	wrong := node.PoolAs("app", "nope").Get()
	defer wrong.Close()
	if _, err := wrong.Do("PING"); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS") {
		t.Errorf("PING as app with a wrong password = %v, want WRONGPASS", err)
	}
}

func TestACLFailsWithAReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		user ACLUser
		want string
	}{
		{"empty name", ACLUser{Name: "", Rules: "on"}, "ACL user name"},
		{"name with a space", ACLUser{Name: "a b", Rules: "on"}, "ACL user name"},
		{"rules on two lines", ACLUser{Name: "a", Rules: "on\nuser evil on"}, "line break"},
		{"rules Redis refuses", ACLUser{Name: "a", Rules: "on +nosuchcommand"}, "nosuchcommand"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := runStart(t, 1, WithACL(tc.user))
			if !strings.Contains(got.fatal, tc.want) {
				t.Errorf("Start with %+v: Fatalf %q, want it to hold %q", tc.user, got.fatal, tc.want)
			}
		})
	}
}

func TestACLText(t *testing.T) {
	t.Parallel()
	got, err := aclText([]ACLUser{{Name: "default", Rules: "on >secret ~* &* +@all"}})
	if want := "user default on >secret ~* &* +@all\n"; err != nil || got != want {
		t.Errorf("aclText with a default user = %q, %v; want %q (no second default)", got, err, want)
	}
}
