package strategytest_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/fault"
	setnxex "github.com/lockzoo/lockzoo/set_nx_ex"
	"github.com/lockzoo/lockzoo/strategy"
	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// TestTimelineOfStaleRelease: set_nx_ex's owner-safe-release result
// carries what its clients did: A stopped inside its release and resumed,
// A's lease running out, A's DEL after it, and B and C each believing they
// held the lock at once.
func TestTimelineOfStaleRelease(t *testing.T) {
	target := strategytest.Target{Name: "set_nx_ex", New: func(p []strategy.Pool, c strategy.Config) (strategy.Locker, error) {
		return setnxex.New(p[0], c)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results, err := strategytest.Evaluate(ctx, target, strategytest.Options{Scenarios: []string{"owner-safe-release"}})
	if err != nil || len(results) != 1 {
		t.Fatalf("Evaluate() = %d results, %v; want 1, nil", len(results), err)
	}
	r := results[0]
	tl := r.Timeline
	if r.Verdict != strategytest.Violated || tl == nil {
		t.Fatalf("owner-safe-release = %s with timeline %v, want violated with one (%s)", r.Verdict, tl, r.Account)
	}
	if got := strings.Join(tl.Clients, ","); got != "A,B,C" {
		t.Errorf("Clients = %s, want A,B,C", got)
	}
	// find returns the index of the first event after from matching match.
	find := func(from int, what string, match func(strategytest.Event) bool) int {
		t.Helper()
		for i := from; i < len(tl.Events); i++ {
			if match(tl.Events[i]) {
				return i
			}
		}
		t.Fatalf("no %s after event %d in:\n%s", what, from, texts(tl))
		return -1
	}
	point := fault.SetNXExReleaseAfterGet
	stopped := find(0, "stop of A", func(e strategytest.Event) bool {
		return e.Kind == strategytest.EventFault && e.Client == "A" && e.Op == point && e.Result == "stopped"
	})
	expired := find(stopped, "expiry of A's lease", func(e strategytest.Event) bool {
		return e.Kind == strategytest.EventExpiry && e.Client == "A"
	})
	// B's lease comes when Redis frees A's key, which may be a moment
	// before A's Deadline by the client's clock (the expiry is the
	// server's, in ms): before or after the expiry event, but after A
	// stopped, and before A resumes.
	bHolds := find(stopped, "B's lease", func(e strategytest.Event) bool {
		return e.Kind == strategytest.EventReturn && e.Client == "B" && strings.HasPrefix(e.Result, "a lease")
	})
	resumed := find(max(expired, bHolds), "resumption of A", func(e strategytest.Event) bool {
		return e.Kind == strategytest.EventFault && e.Client == "A" && e.Result == "resumed"
	})
	find(resumed, "A's DEL", func(e strategytest.Event) bool {
		return e.Kind == strategytest.EventCommand && e.Client == "A" && e.Op == "DEL" && e.Result == "1"
	})
	for i := 1; i < len(tl.Events); i++ {
		if tl.Events[i].At < tl.Events[i-1].At {
			t.Errorf("event %d at %v comes before event %d at %v", i, tl.Events[i].At, i-1, tl.Events[i-1].At)
		}
	}
	if len(tl.Overlaps) != 1 || tl.Overlaps[0].A != "B" || tl.Overlaps[0].B != "C" {
		t.Errorf("Overlaps = %+v, want B's and C's", tl.Overlaps)
	}
	var open []string
	for _, h := range tl.Held {
		if h.Open {
			open = append(open, h.Client)
		}
	}
	if !slices.Equal(open, []string{"B"}) {
		t.Errorf("clients still believing they held at the end = %v, want [B]", open)
	}
}

func texts(tl *strategytest.Timeline) string {
	var b strings.Builder
	for _, e := range tl.Events {
		b.WriteString(e.At.String() + " " + e.Text() + "\n")
	}
	return b.String()
}
