// Package compare is lockcompare's body: it runs lockzoo's race-condition
// suite and benchmarks on a list of targets and prints how they compare
// (text tables, JSON, an HTML report). cmd/lockcompare runs it on every
// lockzoo technique; peers/cmd/comparepeers adds the peer libraries as rows.
//
//	import "github.com/lockzoo/lockzoo/internal/compare"
package compare

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// Exit statuses Run returns.
const (
	exitOK       = 0 // every verdict as claimed, every measurement done
	exitProblems = 1 // a verdict contradicts a claim, or something failed
	exitUsage    = 2 // bad flags
)

// Run is the command: it parses args, runs the comparison on targets (the
// rows, in order; -techniques picks among them by Name), prints the tables
// to stdout (to stderr when -json writes to stdout, so that stdout holds
// only JSON) and writes the files asked for. With -trace TECHNIQUE/SCENARIO
// it runs only that scenario on that technique, without the benchmarks,
// and prints its result line and its timeline, one line per event. It returns the exit status: 0
// when every verdict is what the claims predict, 1 when one is not or a
// measurement failed, 2 for bad flags.
func Run(ctx context.Context, targets []strategytest.Target, args []string, stdout, stderr io.Writer) int {
	return RunKnown(ctx, targets, nil, args, stdout, stderr)
}

// RunKnown is Run with known findings about peers: a verdict that
// contradicts a claim and that known says is a known finding is shown as
// it is, with its account, marked known and listed under KNOWN FINDINGS,
// and does not make the exit status 1. known nil is Run.
func RunKnown(ctx context.Context, targets []strategytest.Target, known KnownFinding, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, targets, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		return exitUsage
	}
	cfg.known = known
	if len(cfg.cluster) > 0 {
		pool, err := openCluster(ctx, cfg.cluster)
		if err != nil {
			fmt.Fprintf(stderr, "lockcompare: -cluster: %v\n", err)
			return exitUsage
		}
		defer pool.Close()
		cfg.pool = pool
	}
	tables := stdout
	if cfg.jsonPath == "-" {
		tables = stderr
	}
	var rep *Report
	write := writeText
	if cfg.trace {
		rep, write = runTrace(ctx, cfg, stderr), writeTrace
	} else {
		rep = compare(ctx, cfg, stderr)
	}
	code := exitOK
	if err := write(tables, rep); err != nil {
		fmt.Fprintf(stderr, "lockcompare: write tables: %v\n", err)
		code = exitProblems
	}
	if cfg.jsonPath != "" {
		if err := writeJSON(cfg.jsonPath, stdout, rep); err != nil {
			fmt.Fprintf(stderr, "lockcompare: -json: %v\n", err)
			code = exitProblems
		}
	}
	if cfg.htmlPath != "" {
		if err := writeHTML(cfg.htmlPath, rep); err != nil {
			fmt.Fprintf(stderr, "lockcompare: -html: %v\n", err)
			code = exitProblems
		}
	}
	if n := len(rep.Problems()); n > 0 {
		fmt.Fprintf(stderr, "lockcompare: %d problem(s), listed under PROBLEMS\n", n)
		code = exitProblems
	}
	fmt.Fprintf(stderr, "lockcompare: done in %v\n", rep.Elapsed.Round(100*time.Millisecond))
	return code
}
