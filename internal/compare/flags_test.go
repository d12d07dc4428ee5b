package compare

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/techniques"
)

// TestBadFlags: bad flags end the run before any Redis work, with status 2
// and a message naming the flag.
func TestBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"help", []string{"-h"}, exitOK, "usage: lockcompare"},
		{"zero bench", []string{"-bench", "0s"}, exitUsage, "-bench"},
		{"zero workers", []string{"-workers", "0"}, exitUsage, "-workers"},
		{"unknown technique", []string{"-techniques", "lua_release,nope"}, exitUsage, `unknown technique "nope"`},
		{"unknown scenario", []string{"-scenarios", "fencing,nope"}, exitUsage, `unknown scenario "nope"`},
		{"zero contenders", []string{"-contenders", "8,0"}, exitUsage, `-contenders: "0" is not a positive number`},
		{"bad contenders", []string{"-contenders", "8x"}, exitUsage, `-contenders: "8x" is not a positive number`},
		{"zero rounds", []string{"-rounds", "0"}, exitUsage, "-rounds 0: want 1 to 20"},
		{"negative rounds", []string{"-rounds", "-3"}, exitUsage, "-rounds -3: want 1 to 20"},
		{"too many rounds", []string{"-rounds", "21"}, exitUsage, "-rounds 21: want 1 to 20"},
		{"rounds not a number", []string{"-rounds", "three"}, exitUsage, "-rounds"},
		{"zero bound", []string{"-bound", "0s"}, exitUsage, "-bound 0s: want a positive duration"},
		{"negative bound", []string{"-bound", "-1s"}, exitUsage, "-bound -1s: want a positive duration"},
		{"stray argument", []string{"now"}, exitUsage, "unexpected arguments"},
		{"unknown flag", []string{"-fast"}, exitUsage, "-fast"},
		{"trace without a scenario", []string{"-trace", "getset_timestamp/method1"}, exitUsage, "is not TECHNIQUE/SCENARIO"},
		{"sentinel without master", []string{"-sentinel", "127.0.0.1:26379"}, exitUsage, "-sentinel needs -master"},
		{"master without sentinel", []string{"-master", "mymaster"}, exitUsage, "-master needs -sentinel"},
		{"sentinel and addrs", []string{"-sentinel", "127.0.0.1:26379", "-master", "mymaster", "-addrs", "127.0.0.1:6379"}, exitUsage, "give one"},
		{"trace and techniques", []string{"-trace", "set_nx_ex/fencing", "-techniques", "set_nx_ex"}, exitUsage, "drop -techniques"},
		{"cluster and addrs", []string{"-cluster", "a:1", "-addrs", "b:2"}, exitUsage, "-cluster and -addrs"},
		{"cluster and rounds", []string{"-cluster", "a:1", "-rounds", "3"}, exitUsage, "drop -rounds"},
		{"cluster and redlock", []string{"-cluster", "a:1", "-techniques", "redlock"}, exitUsage, "redlock spans 5 nodes"},
		{"cluster not listening", []string{"-cluster", "127.0.0.1:1"}, exitUsage, "-cluster: lockzoo: cluster:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locktest.NoLeaks(t)
			var stdout, stderr bytes.Buffer
			if code := Run(context.Background(), techniques.All(), tt.args, &stdout, &stderr); code != tt.code {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", tt.args, code, tt.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("run(%q) stderr = %q, want it to mention %q", tt.args, stderr.String(), tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("run(%q) wrote %q to stdout, want nothing", tt.args, stdout.String())
			}
		})
	}
}

// TestPickKeepsSuiteOrder: -scenarios and -techniques select in the suite's
// order, whatever order they are given in.
func TestPickKeepsSuiteOrder(t *testing.T) {
	locktest.NoLeaks(t)
	got, err := pick([]string{"c", "a"}, []string{"a", "b", "c"}, "scenario")
	if err != nil || strings.Join(got, ",") != "a,c" {
		t.Errorf("pick(c,a) = %v, %v; want [a c], nil", got, err)
	}
	if all, err := pick(nil, []string{"a", "b"}, "scenario"); err != nil || len(all) != 2 {
		t.Errorf("pick(nothing) = %v, %v; want all, nil", all, err)
	}
}

// TestClusterFlagKeepsSingleNodeTechniques: -cluster without -techniques
// runs every technique but those that span several nodes.
func TestClusterFlagKeepsSingleNodeTechniques(t *testing.T) {
	locktest.NoLeaks(t)
	var stderr bytes.Buffer
	cfg, err := parseFlags([]string{"-cluster", "a:1,b:2"}, techniques.All(), &stderr)
	if err != nil {
		t.Fatalf("parseFlags(-cluster) = %v; stderr %q", err, stderr.String())
	}
	if strings.Join(cfg.cluster, ",") != "a:1,b:2" {
		t.Errorf("cluster seeds = %v, want [a:1 b:2]", cfg.cluster)
	}
	for _, target := range cfg.techniques {
		if target.Nodes > 1 {
			t.Errorf("-cluster kept %s, which spans %d nodes", target.Name, target.Nodes)
		}
	}
	if got, want := len(cfg.techniques), len(techniques.All())-1; got != want {
		t.Errorf("-cluster kept %d techniques, want %d (all but redlock)", got, want)
	}
}
