package check

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/cluster"
)

// Exit statuses Run returns.
const (
	ExitClean  = 0 // nothing found can break a claimed property
	ExitHazard = 1 // a finding can break one
	ExitCannot = 2 // the check could not run: bad flags, an address unreachable
)

// Report is what one check found: the findings of every address, in the
// order the flags named them, then the independence of the addresses.
type Report struct {
	Prefix     string    `json:"prefix"`
	Addrs      []string  `json:"addrs"`
	Techniques []string  `json:"techniques"` // whose claims count
	Findings   []Finding `json:"findings"`
	// Unreachable lists the addresses that could not be checked, and why.
	Unreachable []string `json:"unreachable,omitempty"`
	Exit        int      `json:"exit"` // the exit status, as Code returns it
}

// Code returns the exit status the report calls for: ExitCannot when an
// address could not be checked, ExitHazard when a finding is a hazard,
// ExitClean otherwise (notes and unknowns included: an unknown says why).
func (r *Report) Code() int {
	if len(r.Unreachable) > 0 {
		return ExitCannot
	}
	for _, f := range r.Findings {
		if f.Status == Hazard {
			return ExitHazard
		}
	}
	return ExitClean
}

// Run is `lockcompare check`: args are the flags after "check". It checks
// every address, prints the findings to stdout (as a table, or as JSON
// with -json) and the addresses it could not reach to stderr, and returns
// the exit status: ExitClean, ExitHazard or ExitCannot (bad flags
// included; -h prints the usage and returns ExitClean).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, os.Getenv, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return ExitClean
	case err != nil:
		return ExitCannot
	}
	if len(cfg.seeds) > 0 {
		masters, err := clusterMasters(ctx, cfg)
		if err != nil {
			fmt.Fprintf(stderr, "lockcompare check: -cluster %s: %v\n", strings.Join(cfg.seeds, ","), err)
			return ExitCannot
		}
		cfg.targets = append(cfg.targets, masters...)
	}
	rep := check(ctx, cfg)
	for _, u := range rep.Unreachable {
		fmt.Fprintf(stderr, "lockcompare check: %s\n", u)
	}
	if cfg.json {
		err = writeJSON(stdout, rep)
	} else {
		err = writeText(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "lockcompare check: write the report: %v\n", err)
		return ExitCannot
	}
	return rep.Exit
}

// check runs every family on every address the configuration names.
func check(ctx context.Context, cfg config) *Report {
	rep := &Report{Prefix: cfg.prefix, Techniques: cfg.techniques}
	if len(rep.Techniques) == 0 {
		rep.Techniques = allTechniques()
	}
	var nodes []*node
	for _, t := range cfg.targets {
		rep.Addrs = append(rep.Addrs, t.name)
		n, err := open(ctx, t)
		if err != nil {
			rep.Unreachable = append(rep.Unreachable, err.Error())
			continue
		}
		nodes = append(nodes, n)
		rep.Findings = append(rep.Findings,
			checkMemory(n),
			checkPersistence(n),
			checkReplication(n, cfg.replicas),
			checkVersion(ctx, n),
			checkCluster(ctx, n, cfg.prefix),
			checkAccess(ctx, n, cfg.prefix),
		)
	}
	if len(nodes) > 1 {
		rep.Findings = append(rep.Findings, checkIndependence(ctx, nodes))
	}
	for _, n := range nodes {
		_ = n.close() // read-only by now; a failed close loses nothing
	}
	for i, f := range rep.Findings {
		rep.Findings[i] = f.only(cfg.techniques)
	}
	rep.Exit = rep.Code()
	return rep
}

// writeJSON writes the report as indented JSON.
func writeJSON(w io.Writer, rep *Report) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// clusterMasters returns a target for every master of the cluster that
// cfg.seeds lead to, as a cluster.Pool finds them (CLUSTER SHARDS or
// SLOTS), within cfg.timeout.
func clusterMasters(ctx context.Context, cfg config) ([]target, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	p, err := cluster.New(ctx, cfg.seeds, cluster.WithDial(cfg.dial))
	if err != nil {
		return nil, err
	}
	defer p.Close()
	var ts []target
	for _, addr := range p.Masters() {
		ts = append(ts, target{name: addr, dial: func(ctx context.Context) (redis.Conn, error) { return cfg.dial(ctx, addr) }})
	}
	return ts, nil
}
