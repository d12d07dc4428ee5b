// Command lockcompare runs lockzoo's race-condition suite and benchmarks on
// every technique and prints how they compare: a guarantees matrix
// (technique x property: claimed, observed, violations/attempts), the
// uncontended speed next to a raw SET NX PX + EVALSHA ceiling measured in the
// same run, and the behaviour of one contended key.
//
//	go run ./cmd/lockcompare                      # starts its own Redis nodes
//	go run ./cmd/lockcompare -addrs h1:6379,h2:6379,h3:6379
//	go run ./cmd/lockcompare -json - -html report.html
//
// With no -addrs it starts fresh Redis nodes through the test harness
// (internal/redistest: Docker when an engine answers, else redis-server;
// LOCKZOO_REDIS_BACKEND forces one) and stops them when done. With -addrs it
// uses those servers, namespacing its keys; the scenarios that must kill or
// freeze a node then report "skipped: needs managed nodes".
//
// Results go to stdout, progress to stderr. The exit status is 0 when every
// verdict is what the technique's claims predict, 1 when one is not or a
// measurement failed, and 2 for bad flags. `make compare` runs it;
// docs/compare.md explains the columns.
//
// `lockcompare check -addrs h1:6379,...` instead checks existing servers
// for the settings that break a technique's claimed properties (eviction,
// persistence, replication, version and commands, cluster slots, the
// user's access, the independence of redlock's masters); its body is
// internal/check, and docs/check.md explains it.
//
// `lockcompare report -in run.json -out docs/report.md` writes a report
// that -json wrote as a markdown page; `make docs-report` runs both.
//
// The command's body is internal/compare; this wrapper passes it every
// lockzoo technique (peers/cmd/comparepeers adds the peer libraries).
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/lockzoo/lockzoo/internal/check"
	"github.com/lockzoo/lockzoo/internal/compare"
	"github.com/lockzoo/lockzoo/internal/techniques"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command without the process around it: "check" as the first
// argument runs internal/check on the rest, "report" writes a -json report
// as markdown, anything else runs internal/compare on every technique
// (and lua_release+replicas, techniques.Replicated). It returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "check" {
		return check.Run(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "report" {
		return compare.RunReport(args[1:], stderr)
	}
	return compare.Run(ctx, append(techniques.All(), techniques.Replicated()...), args, stdout, stderr)
}
