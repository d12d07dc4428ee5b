package line

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTokenRoundTrip: what SetTry and SetPass write, parseToken reads
// back, and any other token is no attempt of the waiter's.
func TestTokenRoundTrip(t *testing.T) {
	tests := []struct {
		name, token, waiter string
		try, pass           uint64
		ok                  bool
	}{
		{name: "attempt", token: "w1.3", waiter: "w1", try: 3, ok: true},
		{name: "dotted waiter", token: "host.a.b.12", waiter: "host.a.b", try: 12, ok: true},
		{name: "hand-off", token: "w1.p2", waiter: "w1", pass: 2, ok: true},
		{name: "token is the waiter", token: "w1", waiter: "w1"},
		{name: "another prefix", token: "x.3", waiter: "w1"},
		{name: "suffix with a dot", token: "w1.3.4", waiter: "w1"},
		{name: "empty suffix", token: "w1.", waiter: "w1"},
		{name: "zero", token: "w1.0", waiter: "w1"},
		{name: "leading zero", token: "w1.03", waiter: "w1"},
		{name: "no waiter", token: ".3", waiter: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			try, pass, ok := parseToken(tt.token, tt.waiter)
			assert.Equal(t, tt.ok, ok, "parseToken(%q, %q) ok", tt.token, tt.waiter)
			assert.Equal(t, tt.try, try, "try")
			assert.Equal(t, tt.pass, pass, "pass")
			if !ok {
				return
			}
			a := Attempt{Waiter: tt.waiter}
			if tt.pass > 0 {
				a.SetPass(tt.pass)
			} else {
				a.SetTry(tt.try)
			}
			assert.Equal(t, tt.token, a.Token, "the token written back")
			assert.True(t, a.TokenNamesWaiter(), "TokenNamesWaiter of %q", a.Token)
		})
	}
}
