package compare

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/internal/cliflag"
	"github.com/lockzoo/lockzoo/strategy"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// config is what the flags ask for.
type config struct {
	addrs      []string // existing servers; empty means nodes from the harness
	sentinels  []string // -sentinel: Sentinels naming the masters to run on
	masters    []string // -master: the names of those masters, node i's first
	jsonPath   string   // "" none, "-" stdout
	htmlPath   string   // "" none
	bench      time.Duration
	workers    int
	scenarios  []string // names, in suite order
	techniques []strategytest.Target
	workload   bench.Workload
	pairs      int           // sequential pairs counted for round trips
	trace      bool          // -trace: the one scenario of techniques[0], printed as a timeline
	crowds     []int         // numbers of contenders of the many-contenders runs
	rounds     int           // uncontended, contended and frozen-node measurements per row, in interleaved rounds (1: the one of the steps)
	bound      time.Duration // the longest each measurement may run (-bound)
	known      KnownFinding  // known findings about peers; nil for none (not a flag)

	// cluster are -cluster's seeds: every single-node technique runs over
	// pool, a cluster.Pool on them (made by RunKnown).
	cluster []string
	pool    strategy.Pool
}

// maxRounds bounds -rounds: each round measures every row for -bench on
// fresh nodes, and past a score of rounds the medians move no more.
const maxRounds = 20

// parseFlags reads args; -techniques picks among targets. It returns
// flag.ErrHelp for -h, and cliflag.ErrUsage after printing the problem and
// the usage to stderr.
func parseFlags(args []string, targets []strategytest.Target, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("lockcompare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		addrs  = fs.String("addrs", "", "comma-separated `host:port` list of existing Redis servers to use instead of starting nodes")
		sentl  = fs.String("sentinel", "", "comma-separated `host:port` list of Sentinels: run the suite and the benchmarks through Sentinel (package sentinel) on the masters -master names, instead of starting nodes")
		master = fs.String("master", "", "comma-separated `NAME`s of the masters the -sentinel Sentinels monitor; node i of a technique is the i-th (redlock needs as many as its nodes)")
		seeds  = fs.String("cluster", "", "comma-separated `host:port` list of nodes of an existing Redis Cluster: run the suite and the benchmarks of every single-node technique over a cluster.Pool on it")
		jsonTo = fs.String("json", "", "write the results as JSON to `FILE` (\"-\" for stdout)")
		htmlTo = fs.String("html", "", "write a self-contained HTML report with charts to `FILE`")
		dur    = fs.Duration("bench", 2*time.Second, "`DURATION` of each uncontended measurement")
		work   = fs.Int("workers", 16, "goroutines in the uncontended measurement, each on its own key")
		scen   = fs.String("scenarios", "", "comma-separated scenarios to run (default all: "+strings.Join(strategytest.ScenarioNames(), ",")+")")
		crowds = fs.String("contenders", "8,32,128", "comma-separated numbers of contenders, each with a Locker of its own, for the many-contenders rows of CONTENDED (\"none\" for none)")
		techs  = fs.String("techniques", "", "comma-separated techniques to compare (default all: "+strings.Join(techniqueNames(targets), ",")+")")
		rounds = fs.Int("rounds", 1, fmt.Sprintf("`N` interleaved rounds of the uncontended and contended measurements, 1 to %d: each further round measures the raw ceiling and then a technique (uncontended, contended apart and shared, then with a node frozen), for every technique, on fresh nodes, and SPEED, CONTENDED and REDLOCK show medians, with each row's per-round ratio to raw, util's and frozen/healthy's spread, which a machine whose speed drifts during the run skews less", maxRounds))
		bound  = fs.Duration("bound", defaultBound, "`DURATION` each measurement may run at most: a contended run or crowd whose Lock gives up when it ends shows \"did not finish\" (a result), any other measurement fails")
		trace  = fs.String("trace", "", "run only scenario SCENARIO on technique TECHNIQUE, without the benchmarks, and print what its clients did as a timeline (`TECHNIQUE/SCENARIO`, e.g. set_nx_ex/owner-safe-release)")
	)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: lockcompare [flags]\n       lockcompare check -addrs host:port[,...] (see lockcompare check -h)\n       lockcompare report -in FILE.json -out FILE.md (see lockcompare report -h)\n\nRuns the race-condition suite and the benchmarks on every lockzoo technique.\n\n")
		fs.PrintDefaults()
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return config{}, err
	}
	bad := func(format string, a ...any) (config, error) {
		return config{}, cliflag.Bad(fs, format, a...)
	}
	cfg := config{
		addrs:     cliflag.List(*addrs),
		sentinels: cliflag.List(*sentl),
		masters:   cliflag.List(*master),
		jsonPath:  *jsonTo,
		htmlPath:  *htmlTo,
		bench:     *dur,
		workers:   *work,
		workload:  bench.DefaultWorkload(),
		pairs:     50,
		rounds:    *rounds,
		bound:     *bound,
	}
	if err := checkSentinelFlags(cfg); err != nil {
		return bad("%v", err)
	}
	if cfg.bench <= 0 {
		return bad("-bench %v: want a positive duration", cfg.bench)
	}
	if cfg.bound <= 0 {
		return bad("-bound %v: want a positive duration", cfg.bound)
	}
	if cfg.workers < 1 {
		return bad("-workers %d: want at least 1", cfg.workers)
	}
	if cfg.rounds < 1 || cfg.rounds > maxRounds {
		return bad("-rounds %d: want 1 to %d", cfg.rounds, maxRounds)
	}
	var err error
	if cfg.crowds, err = crowdsFlag(*crowds); err != nil {
		return bad("-contenders: %v", err)
	}
	if cfg.scenarios, err = pick(cliflag.List(*scen), strategytest.ScenarioNames(), "scenario"); err != nil {
		return bad("-scenarios: %v", err)
	}
	names, err := pick(cliflag.List(*techs), techniqueNames(targets), "technique")
	if err != nil {
		return bad("-techniques: %v", err)
	}
	for _, t := range targets {
		if slices.Contains(names, t.Name) {
			cfg.techniques = append(cfg.techniques, t)
		}
	}
	if cfg.cluster = cliflag.List(*seeds); len(cfg.cluster) > 0 {
		switch {
		case len(cfg.addrs) > 0:
			return bad("-cluster and -addrs: give one")
		case cfg.rounds > 1:
			return bad("-cluster runs one round: drop -rounds")
		case *trace != "":
			return bad("-cluster does not take -trace")
		}
		var single []strategytest.Target
		for _, t := range cfg.techniques {
			if t.Nodes > 1 {
				if *techs != "" {
					return bad("-cluster runs single-node techniques: %s spans %d nodes", t.Name, t.Nodes)
				}
				continue
			}
			single = append(single, t)
		}
		cfg.techniques = single
	}
	if *trace != "" {
		if *techs != "" || *scen != "" {
			return bad("-trace names its technique and scenario: drop -techniques and -scenarios")
		}
		target, scenario, err := parseTrace(*trace, targets)
		if err != nil {
			return bad("-trace: %v", err)
		}
		cfg.trace, cfg.techniques, cfg.scenarios = true, []strategytest.Target{target}, []string{scenario}
	}
	return cfg, nil
}

// pick returns the names of all that were asked for, in all's order; asked
// empty means all. A name not in all is an error naming the valid ones.
func pick(asked, all []string, what string) ([]string, error) {
	for _, a := range asked {
		if !slices.Contains(all, a) {
			return nil, fmt.Errorf("unknown %s %q (known: %s)", what, a, strings.Join(all, ", "))
		}
	}
	if len(asked) == 0 {
		return all, nil
	}
	var out []string
	for _, name := range all {
		if slices.Contains(asked, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

func techniqueNames(targets []strategytest.Target) []string {
	var names []string
	for _, t := range targets {
		names = append(names, t.Name)
	}
	return names
}
