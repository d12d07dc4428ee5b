package check_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/lockzoo/lockzoo/internal/check"
	"github.com/lockzoo/lockzoo/internal/redistest"
)

// Run checks the servers a service would use, prints the table and
// returns the exit status. A fresh node of the test harness has no
// persistence, which breaks redlock's NodeFaultTolerant: exit status 1.
// (-timeout 1m: a loaded machine must not turn a slow reply into an
// "unknown".) The table names each address; this example prints the rows that break a
// claim, without it, and the closing line.
func ExampleRun() {
	d := redistest.NewDetached("example-check")
	err := d.Run(func() {
		node := redistest.Start(d, 1)[0]
		var out bytes.Buffer
		code := check.Run(context.Background(), []string{"-addrs", node.Addr(), "-timeout", "1m"}, &out, os.Stderr)
		for line := range strings.Lines(out.String()) {
			switch f := strings.Fields(line); {
			case len(f) >= 3 && strings.HasPrefix(line, node.Addr()) && f[2] == "HAZARD": // a row of the table, not of DETAILS
				fmt.Println(f[1], f[2])
			case strings.HasPrefix(line, "RESULT"):
				fmt.Print(line)
			}
		}
		fmt.Println("exit status", code)
	})
	if err != nil {
		fmt.Println("no Redis:", err)
	}
	// Output:
	// persistence HAZARD
	// RESULT  1 hazard(s), 0 unknown, 0 note(s), 5 ok: exit status 1
	// exit status 1
}

// With -techniques, hazards to the other techniques become notes: a
// service that uses only lua_release on the same node passes. -json gives
// the findings as data.
func ExampleRun_json() {
	d := redistest.NewDetached("example-check-json")
	err := d.Run(func() {
		node := redistest.Start(d, 1)[0]
		var out bytes.Buffer
		code := check.Run(context.Background(), []string{"-addrs", node.Addr(), "-techniques", "lua_release", "-json", "-timeout", "1m"}, &out, os.Stderr)
		var rep check.Report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			fmt.Println(err)
			return
		}
		for _, f := range rep.Findings {
			fmt.Println(f.Hazard, f.Status)
		}
		fmt.Println("exit status", code)
	})
	if err != nil {
		fmt.Println("no Redis:", err)
	}
	// Output:
	// eviction ok
	// persistence note
	// replication ok
	// version ok
	// cluster ok
	// access ok
	// exit status 0
}
