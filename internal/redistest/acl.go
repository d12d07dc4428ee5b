package redistest

import (
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// ACLUser is one user of a node's ACL file: its name and its ACL rules, as
// an ACL file line "user <Name> <Rules>" takes them. For example
//
//	ACLUser{Name: "app", Rules: "on >pw resetchannels ~app:* &app:* +@all"}
//
// is a user with password "pw" confined to the keys and channels that start
// with "app:".
type ACLUser struct {
	Name, Rules string
}

// defaultRules keep the harness's own connections (Node.Do, Node.Pool)
// able to do everything on a node with an ACL file, unless WithACL
// redefines the user named default.
const defaultRules = "on nopass ~* &* +@all"

// WithACL starts the nodes with an ACL file (aclfile in the configuration)
// that defines users, one line each, and the user default with every right
// and no password, unless users name default themselves. Node.PoolAs
// connects as one of them. Both backends run such nodes: the file lies in
// the node's directory, or in /data of its container. Start calls t.Fatalf when a user's name is empty or holds
// a space or a line break, when its rules hold a line break, and when Redis
// refuses the file.
func WithACL(users ...ACLUser) Option {
	return func(o *options) {
		o.withACL = true
		o.acl = append(o.acl, users...)
	}
}

// aclText returns the ACL file that defines users, or an error naming the
// first user that cannot be written on a line of its own.
func aclText(users []ACLUser) (string, error) {
	var b strings.Builder
	hasDefault := false
	for _, u := range users {
		if u.Name == "" || strings.ContainsAny(u.Name, " \t\r\n") {
			return "", fmt.Errorf("ACL user name %q: want a non-empty name without spaces or line breaks", u.Name)
		}
		if strings.ContainsAny(u.Rules, "\r\n") {
			return "", fmt.Errorf("ACL rules of user %s hold a line break: %q", u.Name, u.Rules)
		}
		hasDefault = hasDefault || u.Name == "default"
	}
	if !hasDefault {
		users = append([]ACLUser{{Name: "default", Rules: defaultRules}}, users...)
	}
	for _, u := range users {
		fmt.Fprintf(&b, "user %s %s\n", u.Name, u.Rules)
	}
	return b.String(), nil
}

// PoolAs returns a new pool whose connections authenticate to the node as
// user with password (AUTH user password when dialing), with the same
// settings as Pool; it is closed when the test ends. A wrong user or
// password makes every dial of the pool fail with Redis's WRONGPASS error.
func (n *Node) PoolAs(user, password string) *redis.Pool {
	return n.addPool(redis.DialUsername(user), redis.DialPassword(password))
}
