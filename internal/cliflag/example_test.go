package cliflag_test

import (
	"flag"
	"fmt"
	"os"

	"github.com/lockzoo/lockzoo/internal/cliflag"
)

// A subcommand parses its flags with Parse, reports a bad value with Bad
// and splits a comma-separated value with List.
func Example() {
	fs := flag.NewFlagSet("lockcompare demo", flag.ContinueOnError)
	fs.SetOutput(os.Stdout)
	addrs := fs.String("addrs", "", "comma-separated `host:port` list")
	workers := fs.Int("workers", 1, "goroutines")
	fs.Usage = func() { fmt.Println("usage: lockcompare demo [-addrs host:port,...] [-workers N]") }

	if err := cliflag.Parse(fs, []string{"-addrs", "a:1, b:2", "-workers", "0"}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q\n", cliflag.List(*addrs))
	if *workers < 1 {
		fmt.Println(cliflag.Bad(fs, "-workers %d: want at least 1", *workers))
	}
	// Output:
	// ["a:1" "b:2"]
	// lockcompare demo: -workers 0: want at least 1
	// usage: lockcompare demo [-addrs host:port,...] [-workers N]
	// lockzoo: lockcompare: bad flags
}
