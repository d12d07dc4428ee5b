package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRunDispatches: "check" first runs lockcompare check, "report" the
// markdown writer, anything else the comparison; -h prints each one's usage and exits 0, a bad flag exits
// 2.
func TestRunDispatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args  []string
		code  int
		usage string
	}{
		{[]string{"check", "-h"}, 0, "usage: lockcompare check -addrs"},
		{[]string{"-h"}, 0, "usage: lockcompare [flags]"},
		{[]string{"check", "-nope"}, 2, "usage: lockcompare check -addrs"},
		{[]string{"-nope"}, 2, "usage: lockcompare [flags]"},
		{[]string{"report", "-h"}, 0, "usage: lockcompare report -in"},
		{[]string{"report", "-nope"}, 2, "usage: lockcompare report -in"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			if code := run(context.Background(), tc.args, &out, &errOut); code != tc.code {
				t.Errorf("run(%q) = %d, want %d", tc.args, code, tc.code)
			}
			if !strings.HasPrefix(errOut.String(), tc.usage) && !strings.Contains(errOut.String(), "\n"+tc.usage) {
				t.Errorf("run(%q) stderr = %q, want the usage %q", tc.args, errOut.String(), tc.usage)
			}
		})
	}
}
