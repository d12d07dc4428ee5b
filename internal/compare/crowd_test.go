package compare

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/bench"
	"github.com/lockzoo/lockzoo/strategy"
)

// TestUnfinishedCrowdIsARow: a crowd that did not finish within the bound
// is shown in its technique's row, beside the crowds that finished, in the
// text and in the HTML report's table, and is not one of the run's
// problems.
func TestUnfinishedCrowdIsARow(t *testing.T) {
	rep := &Report{Settings: Settings{Crowds: []int{8, 128}}, Techniques: []Technique{{
		Name: "slowpeer",
		Crowds: []Crowd{
			{Contenders: 8, Contention: bench.Contention{Sections: 32, Utilisation: 0.5}, RedisMicrosPerSection: 100},
			{Contenders: 128, Unfinished: "did not finish within 2m0s: lock not acquired: context deadline exceeded"},
		},
	}}}
	var b bytes.Buffer
	writeCrowds(&b, rep)
	out := b.String()
	wantFields(t, "writeCrowds()", out, "slowpeer  8", "slowpeer  128  did not finish within 2m0s")
	// The unfinished row's text is no cell of the util column, so it does
	// not widen it: the head's "wait p50" follows "util" and its padding.
	var head string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "technique") {
			head = l
		}
	}
	if gap := strings.Index(head, "wait p50") - strings.Index(head, "util"); gap != len("util")+2 {
		t.Errorf("writeCrowds() =\n%s\nwant the util column %d wide (its head and padding), got %d", out, len("util")+2, gap)
	}
	root := writeParsed(t, rep)
	tables := root.find(hasClass("table", "crowds"))
	if len(tables) != 1 {
		t.Fatalf("HTML report has %d many-contenders tables, want 1", len(tables))
	}
	if rows := tables[0].find(named("tr")); len(rows) != 1+len(rep.Techniques[0].Crowds) {
		t.Errorf("many-contenders table has %d rows, want a head and one per crowd: %d", len(rows), 1+len(rep.Techniques[0].Crowds))
	}
	if p := rep.Problems(); len(p) != 0 {
		t.Errorf("Problems() = %q, want none: an unfinished crowd is a result", p)
	}
}

// TestUnfinishedCrowdKeepsTheColumns: the rows after a crowd that did not
// finish keep the columns of the rows before it. Its text is no cell of a
// column, and a tabwriter line with fewer cells ends the columns it lacks:
// the crowds printed after rueidislock's unfinished one lost their
// alignment so.
func TestUnfinishedCrowdKeepsTheColumns(t *testing.T) {
	finished := func(n int) Crowd {
		return Crowd{Contenders: n, Contention: bench.Contention{Sections: 32, Utilisation: 0.5, Wait: bench.Quantiles{P50: time.Millisecond, P99: 250 * time.Millisecond}}, RedisMicrosPerSection: 1234.5}
	}
	rep := &Report{Settings: Settings{Crowds: []int{8, 128}}, Techniques: []Technique{
		{Name: "before", Crowds: []Crowd{finished(8), finished(128)}},
		{Name: "slowpeer", Crowds: []Crowd{finished(8), {Contenders: 128, Unfinished: "did not finish within 2m0s"}}},
		{Name: "after_a_long_name", Crowds: []Crowd{finished(8), finished(128)}},
	}}
	var b bytes.Buffer
	writeCrowds(&b, rep)
	out := b.String()
	var head, unfinishedRow string
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "technique"):
			head = l
		case strings.Contains(l, "did not finish"):
			unfinishedRow = l
		case head != "" && l != "":
			rows = append(rows, l)
		}
	}
	want := cellStarts(head, "technique", "N", "util", "wait p50", "wait p99", "p99/p50", "hand-off p50", "redis µs")
	if len(rows) != 5 {
		t.Fatalf("writeCrowds() =\n%s\nwant 5 finished rows, got %d", out, len(rows))
	}
	for _, r := range rows {
		if got := fieldStarts(r); !slices.Equal(got, want) {
			t.Errorf("writeCrowds() =\n%s\nrow %q has its cells at %v, want the head's columns %v", out, r, got, want)
		}
	}
	wantFields(t, "writeCrowds()", out, "slowpeer  128  did not finish within 2m0s")
	if got := strings.Index(unfinishedRow, "did not finish"); got != want[2] {
		t.Errorf("writeCrowds() =\n%s\nthe unfinished row's text starts at %d, want the util column's start %d", out, got, want[2])
	}
}

// cellStarts is where each of names starts in head.
func cellStarts(head string, names ...string) []int {
	var starts []int
	for _, n := range names {
		starts = append(starts, strings.Index(head, n))
	}
	return starts
}

// fieldStarts is where each space-separated field of line starts.
func fieldStarts(line string) []int {
	var starts []int
	for i := range len(line) {
		if line[i] != ' ' && (i == 0 || line[i-1] == ' ') {
			starts = append(starts, i)
		}
	}
	return starts
}

// TestUnfinishedContentionIsAResult: a contended run, apart or shared,
// that did not finish within the bound shows dashes in its cells and a
// note under the CONTENDED table, in the text and in the HTML report, and
// is not one of the run's problems; a run that gave up for another reason
// is not taken for one.
func TestUnfinishedContentionIsAResult(t *testing.T) {
	why, ok := unfinished(fmt.Errorf("Lock: %w: %w", strategy.ErrNotAcquired, context.DeadlineExceeded), defaultBound)
	if !ok || !strings.HasPrefix(why, "did not finish within 2m0s: ") {
		t.Errorf("unfinished(not acquired at the deadline) = %q, %v; want \"did not finish within 2m0s: ...\", true", why, ok)
	}
	for _, err := range []error{nil, context.DeadlineExceeded, strategy.ErrNotAcquired, fmt.Errorf("%w: %w", strategy.ErrNotAcquired, context.Canceled)} {
		if why, ok := unfinished(err, defaultBound); ok {
			t.Errorf("unfinished(%v) = %q, true; want false: only a Lock that gave up at the bound is unfinished", err, why)
		}
	}
	rep := &Report{Settings: Settings{Workload: bench.DefaultWorkload()}, Techniques: []Technique{{
		Name:            "slowpeer",
		Shared:          &bench.Contention{Sections: 200, Utilisation: 0.5},
		ApartUnfinished: why,
	}}}
	var b bytes.Buffer
	writeContention(&b, rep)
	out := b.String()
	wantFields(t, "writeContention()", out, "slowpeer  -  -  -  -  50%", "slowpeer: contended apart did not finish within 2m0s (a Lock gave up at the bound)")
	if strings.Contains(out, "shared did not finish") {
		t.Errorf("writeContention() =\n%s\nwant no note for the shared run, which finished", out)
	}
	root := writeParsed(t, rep)
	if html := root.text.String(); !strings.Contains(html, "slowpeer: contended apart did not finish within 2m0s") {
		t.Errorf("HTML report does not say that slowpeer's apart run did not finish")
	}
	if p := rep.Problems(); len(p) != 0 {
		t.Errorf("Problems() = %q, want none: an unfinished contended run is a result", p)
	}
}

// TestUnfinishedNamesTheBound: a report that ran with -bound says that
// bound where a run did not finish, in the crowd rows and the notes under
// CONTENDED; one that does not say (written before -bound) names the
// default.
func TestUnfinishedNamesTheBound(t *testing.T) {
	tests := []struct {
		bound time.Duration
		want  string
	}{
		{20 * time.Second, "did not finish within 20s"},
		{0, "did not finish within 2m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			why, _ := unfinished(fmt.Errorf("%w: %w", strategy.ErrNotAcquired, context.DeadlineExceeded), Settings{Bound: tt.bound}.bound())
			rep := &Report{Settings: Settings{Crowds: []int{8}, Workload: bench.DefaultWorkload(), Bound: tt.bound}, Techniques: []Technique{{
				Name:            "slowpeer",
				Crowds:          []Crowd{{Contenders: 8, Unfinished: why}},
				ApartUnfinished: why,
			}}}
			var b bytes.Buffer
			writeCrowds(&b, rep)
			writeContention(&b, rep)
			wantFields(t, "writeCrowds() and writeContention()", b.String(), "slowpeer  8  "+tt.want, "slowpeer: contended apart "+tt.want)
		})
	}
}

// wantFields fails t unless out, the output of what, holds each of wants
// with runs of spaces taken as one gap (a table's padding varies).
func wantFields(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	flat := strings.Join(strings.Fields(out), "  ")
	for _, want := range wants {
		if !strings.Contains(flat, strings.Join(strings.Fields(want), "  ")) {
			t.Errorf("%s =\n%s\nwant it to hold %q", what, out, want)
		}
	}
}
