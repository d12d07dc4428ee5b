// Package cliflag is how lockcompare's subcommands read their flags
// alike: a bad flag is reported once, as "<command>: <problem>" and the
// usage, and a comma-separated value is split the same way everywhere.
//
//	import "github.com/lockzoo/lockzoo/internal/cliflag"
package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// ErrUsage marks bad flags, already reported with the usage.
var ErrUsage = errors.New("lockzoo: lockcompare: bad flags")

// Parse parses args with fs, which must have been made with
// flag.ContinueOnError. It returns nil when the flags parse and leave no
// argument; flag.ErrHelp for -h (fs has printed the usage); and ErrUsage
// for any other problem, after fs (an unknown or malformed flag) or Bad
// (an argument left over) has printed it with the usage.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return ErrUsage
	}
	if fs.NArg() > 0 {
		return Bad(fs, "unexpected arguments %q", fs.Args())
	}
	return nil
}

// Bad reports a problem with fs's flags: it prints fs's name, ": ", the
// problem (format and a, as fmt.Sprintf reads them) and fs's usage to
// fs's output, and returns ErrUsage.
func Bad(fs *flag.FlagSet, format string, a ...any) error {
	fmt.Fprintf(fs.Output(), "%s: %s\n", fs.Name(), fmt.Sprintf(format, a...))
	fs.Usage()
	return ErrUsage
}

// List splits a comma-separated flag value into its parts, white space
// trimmed, blanks dropped; nil when none is left.
func List(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
