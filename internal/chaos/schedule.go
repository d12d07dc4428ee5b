package chaos

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/lockzoo/lockzoo/internal/redistest"
)

// Fault is a kind of network fault the schedule draws from.
type Fault string

// The fault kinds.
const (
	// Latency delays every chunk by 5, 30, 120 or 400 ms, each way.
	Latency Fault = "latency"
	// Cut closes every connection open through the proxy (Proxy.Reset).
	Cut Fault = "cut"
	// Swallow discards replies while the requests still run: every reply
	// for the phase (Proxy.SwallowReplies), or just the next one
	// (Proxy.DropNextReplies), the connections kept open.
	Swallow Fault = "swallow"
)

// AllFaults returns every fault kind, in the order the schedule draws them.
func AllFaults() []Fault { return []Fault{Latency, Cut, Swallow} }

// ParseFaults parses a comma-separated list of fault kinds ("latency,cut");
// "" and "all" mean AllFaults. An unknown kind is an error naming it.
func ParseFaults(s string) ([]Fault, error) {
	if s == "" || s == "all" {
		return AllFaults(), nil
	}
	var out []Fault
	for _, name := range strings.Split(s, ",") {
		switch f := Fault(strings.TrimSpace(name)); f {
		case Latency, Cut, Swallow:
			out = append(out, f)
		default:
			return nil, fmt.Errorf("lockzoo: chaos: unknown fault %q (want latency, cut or swallow)", f)
		}
	}
	return out, nil
}

// Phase lengths and latencies of the schedule.
var latencies = [...]time.Duration{5 * time.Millisecond, 30 * time.Millisecond, 120 * time.Millisecond, 400 * time.Millisecond}

const (
	minPhase = 50 * time.Millisecond
	maxPhase = 250 * time.Millisecond
)

// phase is one step of a schedule: a fault and how long it lasts.
type phase struct {
	name  string
	apply func(*redistest.Proxy)
	lasts time.Duration
}

// schedule draws one proxy's phases from the run's seed and the proxy's
// index: the same seed gives the same phases.
type schedule struct {
	rng   *rand.Rand
	kinds []Fault
}

func newSchedule(seed int64, node int, kinds []Fault) *schedule {
	return &schedule{rng: rand.New(rand.NewPCG(uint64(seed), uint64(node)+1)), kinds: kinds}
}

// next returns the next phase.
func (s *schedule) next() phase {
	lasts := minPhase + time.Duration(s.rng.Int64N(int64(maxPhase-minPhase)+1))
	switch s.kinds[s.rng.IntN(len(s.kinds))] {
	case Latency:
		d := latencies[s.rng.IntN(len(latencies))]
		return phase{name: "latency " + d.String(), apply: func(p *redistest.Proxy) { p.Delay(d) }, lasts: lasts}
	case Cut:
		// Every connection is cut; the new ones run healthy for the phase.
		return phase{name: "cut", apply: func(p *redistest.Proxy) { p.Heal(); p.Reset() }, lasts: lasts}
	default: // Swallow
		if s.rng.IntN(2) == 0 {
			return phase{name: "swallow one", apply: func(p *redistest.Proxy) { p.Heal(); p.DropNextReplies(1) }, lasts: lasts}
		}
		return phase{name: "swallow", apply: (*redistest.Proxy).SwallowReplies, lasts: lasts}
	}
}
