// Command comparepeers is lockcompare with the peer libraries as rows: it
// runs lockzoo's race-condition suite and benchmarks on every lockzoo
// technique and on redsync (one node and five), bsm/redislock and
// rueidislock, on the same kind of nodes in the same run, and prints the
// GUARANTEES, SPEED, CONTENDED and REDLOCK tables (and, with -html, the
// report). It takes lockcompare's flags.
//
//	cd peers && go run ./cmd/comparepeers -html ../compare-peers.html
//
// `make compare-peers` runs it. The exit status is lockcompare's: 0 when
// every verdict is what the claims predict, 1 when one is not or a
// measurement failed, 2 for bad flags. A peer's verdict on a property it
// does not claim is shown, not judged; one that contradicts its claim and
// is a known finding (peers.Findings, which the peers module's TestSuite
// reads too) is shown as violated, with its account, marked known, and
// does not make the status 1.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockzoo/lockzoo/internal/compare"
	"github.com/lockzoo/lockzoo/internal/techniques"
	"github.com/lockzoo/lockzoo/peers"
)

// quiet drops go-redis's log lines (its pool's dial failures while a
// scenario has a node down), which would interleave with the progress.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func main() {
	goredis.SetLogger(quiet{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	targets := append(techniques.All(), peers.Targets()...)
	code := compare.RunKnown(ctx, targets, peers.KnownFinding, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
