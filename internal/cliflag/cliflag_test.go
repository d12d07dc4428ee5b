package cliflag_test

import (
	"bytes"
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/cliflag"
)

// newFlags returns a flag set named "cmd" with one -n flag, writing to out.
func newFlags(t *testing.T, out *bytes.Buffer) *flag.FlagSet {
	t.Helper()
	fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Int("n", 0, "a number")
	fs.Usage = func() { out.WriteString("usage: cmd [-n N]\n") }
	return fs
}

// TestParse: flags that parse give nil; -h, flag.ErrHelp; an unknown or
// malformed flag or a stray argument, ErrUsage with the problem and the
// usage printed.
func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr error
		want    string // in the output; "" for none
	}{
		{name: "good", args: []string{"-n", "3"}},
		{name: "none", args: nil},
		{name: "help", args: []string{"-h"}, wantErr: flag.ErrHelp, want: "usage: cmd"},
		{name: "unknown flag", args: []string{"-x"}, wantErr: cliflag.ErrUsage, want: "flag provided but not defined: -x"},
		{name: "malformed value", args: []string{"-n", "three"}, wantErr: cliflag.ErrUsage, want: `invalid value "three"`},
		{name: "stray argument", args: []string{"-n", "3", "now"}, wantErr: cliflag.ErrUsage, want: `cmd: unexpected arguments ["now"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := cliflag.Parse(newFlags(t, &out), tt.args)
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.Empty(t, out.String())
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			assert.Contains(t, out.String(), tt.want)
			assert.Contains(t, out.String(), "usage: cmd")
		})
	}
}

// TestBad: the problem is printed after the flag set's name, then the usage.
func TestBad(t *testing.T) {
	var out bytes.Buffer
	err := cliflag.Bad(newFlags(t, &out), "-n %d: want 1 or more", 0)
	require.ErrorIs(t, err, cliflag.ErrUsage)
	assert.Equal(t, "cmd: -n 0: want 1 or more\nusage: cmd [-n N]\n", out.String())
}

// TestList: parts trimmed, blanks dropped, nil for none.
func TestList(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{name: "empty", in: "", want: nil},
		{name: "blanks only", in: " , ,", want: nil},
		{name: "one", in: "a:1", want: []string{"a:1"}},
		{name: "spaces and blanks", in: " a:1, b:2,,c:3 ", want: []string{"a:1", "b:2", "c:3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, cliflag.List(tt.in))
		})
	}
}
