package compare

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/strategy"
)

// Crowd is one many-contenders measurement: Contenders workers, each with a
// Locker of its own (like as many processes), on one hot key
// (bench.CrowdWorkload), and the Redis CPU it cost per critical section.
type Crowd struct {
	Contenders int              `json:"contenders"`
	Contention bench.Contention `json:"contention"`
	// RedisMicrosPerSection is the usec summed over INFO commandstats on
	// every node (the measurement's own INFO and CONFIG left out) over the
	// sections completed; 0 when not measured.
	RedisMicrosPerSection float64 `json:"redis_us_per_section"`
	// CPUMicrosPerSection is the CPU time the servers used (used_cpu_user +
	// used_cpu_sys of INFO cpu: commands, scripts and network I/O alike,
	// so a client that polls pays for every request it sends) over the
	// sections completed; 0 when not measured.
	CPUMicrosPerSection float64 `json:"cpu_us_per_section"`
}

// crowdStep measures n contenders apart, each on a Locker of its own, and
// appends the result to m.t.Crowds.
func (m *measurer) crowdStep(n int) step {
	return step{fmt.Sprintf("contenders %d", n), func(ctx context.Context) (string, error) {
		w := bench.CrowdWorkload(n)
		lockers := make([]strategy.Locker, 0, n)
		defer func() { settle(lockers) }() // n Lockers' connections go before the next step
		for range n {
			l, err := m.target.New(m.nodes.pools, strategy.Config{Prefix: m.nodes.prefix})
			if err != nil {
				return "", err
			}
			lockers = append(lockers, l)
		}
		var c bench.Contention
		usec, cpu, err := redisMicros(ctx, m.nodes.pools, m.nodes.managed != nil, func() error {
			var err error
			c, err = bench.ContendedApart(ctx, lockers, w)
			return err
		})
		if err != nil {
			return "", err
		}
		cr := Crowd{Contenders: n, Contention: c}
		if c.Sections > 0 {
			cr.RedisMicrosPerSection = float64(usec) / float64(c.Sections)
			cr.CPUMicrosPerSection = float64(cpu) / float64(c.Sections)
		}
		m.t.Crowds = append(m.t.Crowds, cr)
		return fmt.Sprintf("%s, Redis %s µs/section (CPU %s µs)", contentionText(c), usText(cr.RedisMicrosPerSection), usText(cr.CPUMicrosPerSection)), nil
	}}
}

// redisMicros runs measure and returns what it cost on pools, in µs: the
// usec summed over INFO commandstats and the servers' CPU time (INFO
// cpu). The statistics are reset first on nodes the run started (reset);
// each cost is the difference of two readings.
func redisMicros(ctx context.Context, pools []strategy.Pool, reset bool, measure func() error) (usec, cpu int64, err error) {
	if reset {
		for _, p := range pools {
			if _, err := do(ctx, p, "CONFIG", "RESETSTAT"); err != nil {
				return 0, 0, fmt.Errorf("CONFIG RESETSTAT: %w", err)
			}
		}
	}
	usec0, err := commandMicros(ctx, pools)
	if err != nil {
		return 0, 0, err
	}
	cpu0, err := cpuMicros(ctx, pools)
	if err != nil {
		return 0, 0, err
	}
	if err := measure(); err != nil {
		return 0, 0, err
	}
	usec1, err := commandMicros(ctx, pools)
	if err != nil {
		return 0, 0, err
	}
	cpu1, err := cpuMicros(ctx, pools)
	if err != nil {
		return 0, 0, err
	}
	return usec1 - usec0, cpu1 - cpu0, nil
}

// cpuMicros sums used_cpu_user and used_cpu_sys of INFO cpu over every
// pool's server, in µs.
func cpuMicros(ctx context.Context, pools []strategy.Pool) (int64, error) {
	var total float64
	for _, p := range pools {
		info, err := redis.String(do(ctx, p, "INFO", "cpu"))
		if err != nil {
			return 0, fmt.Errorf("INFO cpu: %w", err)
		}
		for _, line := range strings.Split(info, "\r\n") {
			name, v, ok := strings.Cut(line, ":")
			if ok && (name == "used_cpu_user" || name == "used_cpu_sys") {
				s, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return 0, fmt.Errorf("INFO cpu: %s: %w", line, err)
				}
				total += s
			}
		}
	}
	return int64(total * 1e6), nil
}

// writeCrowds prints the many-contenders rows of the CONTENDED table, one
// per technique and number of contenders, when any were measured.
func writeCrowds(w io.Writer, rep *Report) {
	if len(rep.Settings.Crowds) == 0 {
		return
	}
	fmt.Fprintf(w, "           many contenders: N workers, each with a Locker of its own, on one key, 1 ms sections (max(4, 256/N) each);\n")
	fmt.Fprintf(w, "           redis µs: Redis time per critical section, from INFO commandstats (a script's commands count in it and on their own);\n")
	fmt.Fprintf(w, "           cpu µs: the servers' CPU per critical section, from INFO cpu (network I/O included: every request counts)\n")
	tw := table(w)
	fmt.Fprintln(tw, "technique\tN\tutil\twait p50\twait p99\tp99/p50\thand-off p50\tredis µs\tcpu µs")
	for _, t := range rep.Techniques {
		for _, c := range t.Crowds {
			k := c.Contention
			ratio := "-"
			if k.Wait.P50 > 0 {
				ratio = fmt.Sprintf("%.2f", float64(k.Wait.P99)/float64(k.Wait.P50))
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, c.Contenders, pctText(k.Utilisation),
				msText(k.Wait.P50), msText(k.Wait.P99), ratio, msText(k.Handoff.P50), usText(c.RedisMicrosPerSection), usText(c.CPUMicrosPerSection))
		}
	}
	tw.Flush()
}

// crowdsFlag reads -contenders: a comma-separated list of positive
// numbers, or "none".
func crowdsFlag(s string) ([]int, error) {
	if strings.TrimSpace(s) == "none" {
		return nil, nil
	}
	var out []int
	for _, part := range list(s) {
		var n int
		if _, err := fmt.Sscanf(part, "%d", &n); err != nil || n < 1 || fmt.Sprint(n) != part {
			return nil, fmt.Errorf("%q is not a positive number", part)
		}
		out = append(out, n)
	}
	return out, nil
}
