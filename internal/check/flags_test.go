package check

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/lockzoo/lockzoo/internal/cliflag"
	"github.com/lockzoo/lockzoo/internal/techniques"
)

// TestParseFlags covers the addresses and auth forms, and the bad flags
// that make the check exit 2.
func TestParseFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		names   []string // the targets' names
		prefix  string
		wantErr string // on stderr; "" for success
	}{
		{"host:port list", []string{"-addrs", "a:1, b:2"}, []string{"a:1", "b:2"}, "lock:", ""},
		{"url with credentials", []string{"-addrs", "redis://app:secret@h:7000/0"}, []string{"h:7000"}, "lock:", ""},
		{"tls url, default port", []string{"-addrs", "rediss://h"}, []string{"rediss://h:6379"}, "lock:", ""},
		{"-u repeated", []string{"-u", "redis://a:1", "-u", "redis://b:2", "--user", "app", "-a", "pw"}, []string{"a:1", "b:2"}, "lock:", ""},
		{"prefix", []string{"-addrs", "a:1", "-prefix", "app:"}, []string{"a:1"}, "app:", ""},
		{"-tls", []string{"-tls", "-addrs", "a:1", "-u", "redis://b:2"}, []string{"rediss://a:1", "b:2"}, "lock:", ""},
		{"missing CA file", []string{"-addrs", "a:1", "-cacert", "/nonexistent/ca.pem"}, nil, "", "-cacert: open /nonexistent/ca.pem"},
		{"CA file without PEM", []string{"-addrs", "a:1", "-cacert", "flags_test.go"}, nil, "", "no PEM certificate"},
		{"no address", nil, nil, "", "no address"},
		{"no port", []string{"-addrs", "host"}, nil, "", `address "host": want host:port`},
		{"-cluster without a port", []string{"-cluster", "host"}, nil, "", `-cluster: address "host": want host:port`},
		{"bad scheme", []string{"-addrs", "http://h:1"}, nil, "", `scheme "http"`},
		{"password redacted", []string{"-addrs", "http://u:secret@h:1"}, nil, "", "u:xxxxx@h:1"},
		{"unknown technique", []string{"-addrs", "a:1", "-techniques", "nope"}, nil, "", `unknown technique "nope"`},
		{"empty prefix", []string{"-addrs", "a:1", "-prefix", ""}, nil, "", "-prefix"},
		{"bad timeout", []string{"-addrs", "a:1", "-timeout", "0s"}, nil, "", "-timeout"},
		{"stray argument", []string{"-addrs", "a:1", "extra"}, nil, "", "unexpected arguments"},
		{"unknown flag", []string{"-nope"}, nil, "", "flag provided but not defined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			cfg, err := parseFlags(tc.args, func(string) string { return "" }, &stderr)
			if tc.wantErr != "" {
				if !errors.Is(err, cliflag.ErrUsage) {
					t.Fatalf("parseFlags(%q) = %v, want cliflag.ErrUsage", tc.args, err)
				}
				mustContain(t, "stderr", stderr.String(), tc.wantErr)
				if strings.Contains(stderr.String(), "secret") {
					t.Errorf("stderr shows the password: %q", stderr.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("parseFlags(%q) = %v; stderr %q", tc.args, err, stderr.String())
			}
			var names []string
			for _, tg := range cfg.targets {
				names = append(names, tg.name)
			}
			if !slices.Equal(names, tc.names) || cfg.prefix != tc.prefix {
				t.Errorf("targets %q, prefix %q; want %q, %q", names, cfg.prefix, tc.names, tc.prefix)
			}
		})
	}
}

// TestRunExitStatus: -h exits 0, bad flags exit 2, without touching a
// server.
func TestRunExitStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"-h"}, ExitClean},
		{[]string{"-addrs", "nohost"}, ExitCannot},
		{nil, ExitCannot},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			if got := Run(context.Background(), tc.args, &out, &errOut); got != tc.want {
				t.Errorf("Run(%q) = %d, want %d; stderr %q", tc.args, got, tc.want, errOut.String())
			}
			mustContain(t, "stderr", errOut.String(), "usage: lockcompare check")
		})
	}
	if _, err := parseFlags([]string{"-h"}, func(string) string { return "" }, &bytes.Buffer{}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("parseFlags(-h) = %v, want flag.ErrHelp", err)
	}
}

// TestTechniqueNames: the check names the techniques as internal/techniques
// does, in its order.
func TestTechniqueNames(t *testing.T) {
	t.Parallel()
	var want []string
	for _, tg := range techniques.All() {
		want = append(want, tg.Name)
	}
	if got := allTechniques(); !slices.Equal(got, want) {
		t.Errorf("allTechniques() = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"GETSET", []string{getsetTimestamp}},
		{"EVALSHA", scripted()},
		{"CLIENT", []string{redlock}},
		{"PUBLISH", allTechniques()},
	} {
		if got := usersOf(tc.cmd); !slices.Equal(got, tc.want) {
			t.Errorf("usersOf(%s) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}
