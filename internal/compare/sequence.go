package compare

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// A sequence diagram draws one scenario result's Timeline, and only it:
// time runs down the page, one row per recorded event in the order they
// happened (not to scale: a dashed rule marks a long pause); a lane per
// client and one for Redis; each command an arrow from its client's lane to
// Redis's, described in the text column on the right; the interval each
// client believed it held the lock a bar on its lane; two clients' intervals
// overlapping a red band across the diagram.

// seq is one drawing, in SVG user units (1 unit = 1 CSS pixel: the SVG is
// drawn at its own size and the page scrolls it sideways when narrower).
type seq struct {
	W, H   string
	Label  string
	Lanes  []seqText // lane names, above the lanes
	Back   []seqRect // overlaps, behind everything
	Lines  []seqLine
	Rects  []seqRect
	Paths  []seqPath
	Texts  []seqText
	Events int // rows drawn for recorded events
}

type seqLine struct{ X1, Y1, X2, Y2, Class string }

type seqRect struct{ X, Y, W, H, Class, Title string }

type seqPath struct{ D, Class string }

type seqText struct{ X, Y, Class, Anchor, Text string }

// Layout of a sequence diagram.
const (
	seqTop      = 40.0 // lane names above the first row
	seqRowH     = 18.0 // one event
	seqGapH     = 20.0 // a pause between events
	seqTimeW    = 58.0 // time column, left of the lanes
	seqTextGap  = 26.0 // Redis lane to the text column
	seqCharW    = 6.7  // width of a character of the text column
	seqPauseMin = 50 * time.Millisecond
)

// seqRow is a line of the diagram: an event, or a marker the layout adds.
type seqRow struct {
	at    time.Duration
	y     float64
	event *strategytest.Event
	text  string // for a marker
	class string
}

// sequence lays out r's timeline. A result without one (a scenario that
// did not run) gets a diagram saying so.
func sequence(r strategytest.Result) seq {
	tl := r.Timeline
	if tl == nil {
		tl = &strategytest.Timeline{}
	}
	laneW := 46.0
	if len(tl.Clients) > 4 {
		laneW = 34.0
	}
	laneX := map[string]float64{}
	var s seq
	for i, c := range tl.Clients {
		laneX[c] = seqTimeW + laneW*(float64(i)+0.5)
	}
	redisX := seqTimeW + laneW*(float64(len(tl.Clients))+0.5)
	laneX[""] = redisX
	textX := redisX + seqTextGap

	rows := seqRows(tl)
	y := seqTop
	var prev time.Duration
	longest := 40
	for i := range rows {
		if i > 0 && rows[i].at-prev >= seqPauseMin {
			s.Lines = append(s.Lines, seqLine{X1: f(seqTimeW - 4), Y1: f(y + seqGapH/2), X2: f(textX + 300), Y2: f(y + seqGapH/2), Class: "pause"})
			s.Texts = append(s.Texts, seqText{X: f(textX), Y: f(y + seqGapH/2 + 4), Class: "pause", Text: "⋯ " + roundDur(rows[i].at-prev) + " later"})
			y += seqGapH
		}
		prev = rows[i].at
		if e := rows[i].event; e != nil && e.Until > prev {
			prev = e.Until // a polling command's last repeat
		}
		rows[i].y = y + seqRowH/2
		y += seqRowH
	}
	if len(rows) == 0 {
		s.Texts = append(s.Texts, seqText{X: f(seqTimeW), Y: f(y + 12), Class: "marker", Text: "nothing recorded: " + shortText(r.Account, 90)})
		y += seqRowH
	}
	if tl.Dropped > 0 {
		s.Texts = append(s.Texts, seqText{X: f(textX), Y: f(y + 12), Class: "marker", Text: fmt.Sprintf("… %d more events not recorded: a timeline keeps its first %d", tl.Dropped, strategytest.MaxEvents)})
		y += seqRowH
	}
	bottom := y + 6

	// yAt is the middle of the first row at or after t.
	yAt := func(t time.Duration) float64 {
		for _, row := range rows {
			if row.at >= t {
				return row.y
			}
		}
		return bottom
	}
	var last time.Duration
	if len(rows) > 0 {
		last = rows[len(rows)-1].at
	}
	for _, o := range tl.Overlaps {
		if o.From > last && tl.Dropped > 0 {
			continue
		}
		y1, y2 := yAt(o.From)-seqRowH/2, yAt(o.To)+seqRowH/2
		s.Back = append(s.Back, seqRect{X: f(2), Y: f(y1), W: f(textX + 300), H: f(y2 - y1), Class: "overlap",
			Title: fmt.Sprintf("%s and %s both believed they held the lock for %s", o.A, o.B, roundDur(o.To-o.From))})
	}
	for _, c := range tl.Clients {
		s.Lines = append(s.Lines, seqLine{X1: f(laneX[c]), Y1: f(seqTop - 8), X2: f(laneX[c]), Y2: f(bottom), Class: "lane"})
	}
	s.Lines = append(s.Lines, seqLine{X1: f(redisX), Y1: f(seqTop - 8), X2: f(redisX), Y2: f(bottom), Class: "lane redis"})
	for _, c := range tl.Clients {
		s.Lanes = append(s.Lanes, seqText{X: f(laneX[c]), Y: f(seqTop - 16), Class: "lane", Anchor: "middle", Text: laneLabel(c, laneW)})
	}
	s.Lanes = append(s.Lanes, seqText{X: f(redisX), Y: f(seqTop - 16), Class: "lane redis", Anchor: "middle", Text: "Redis"})
	s.Texts = append(s.Texts, seqText{X: f(seqTimeW - 10), Y: f(seqTop - 16), Class: "head", Anchor: "end", Text: "ms"})
	for _, h := range tl.Held {
		if h.From > last && tl.Dropped > 0 {
			continue
		}
		y1, y2 := yAt(h.From), yAt(h.To)
		if h.Open {
			y2 = bottom
		}
		class := "held"
		if h.Open {
			class = "held open"
		}
		s.Rects = append(s.Rects, seqRect{X: f(laneX[h.Client] - 5), Y: f(y1), W: "10", H: f(max(y2-y1, 3)), Class: class,
			Title: heldTitle(h)})
	}
	for _, row := range rows {
		longest = max(longest, s.row(row, laneX, redisX, textX))
	}
	width := textX + float64(longest)*seqCharW + 12
	for i := range s.Back {
		s.Back[i].W = f(width - 4)
	}
	for i := range s.Lines {
		if s.Lines[i].Class == "pause" {
			s.Lines[i].X2 = f(width - 4)
		}
	}
	s.W, s.H = f(width), f(bottom+4)
	s.Label = fmt.Sprintf("sequence diagram of %s/%s: %d events", r.Technique, r.Scenario, len(tl.Events))
	return s
}

// seqRows are the timeline's events in order, with a marker row where two
// clients start to overlap.
func seqRows(tl *strategytest.Timeline) []seqRow {
	var rows []seqRow
	for i := range tl.Events {
		rows = append(rows, seqRow{at: tl.Events[i].At, event: &tl.Events[i]})
	}
	for _, o := range tl.Overlaps {
		rows = append(rows, seqRow{at: o.From, text: fmt.Sprintf("⚠ %s and %s both hold the lock", o.A, o.B), class: "warn"})
	}
	slices.SortStableFunc(rows, func(a, b seqRow) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	return rows
}

// row draws one row: its time, its glyph on the lanes and its text; it
// returns the text's length in characters.
func (s *seq) row(row seqRow, laneX map[string]float64, redisX, textX float64) int {
	y := row.y
	s.Texts = append(s.Texts, seqText{X: f(seqTimeW - 10), Y: f(y + 4), Class: "time", Anchor: "end", Text: msText3(row.at)})
	if row.event == nil {
		s.Texts = append(s.Texts, seqText{X: f(textX), Y: f(y + 4), Class: row.class, Text: row.text})
		return len([]rune(row.text))
	}
	e := row.event
	x := laneX[e.Client]
	class := string(e.Kind)
	switch e.Kind {
	case strategytest.EventCommand:
		s.Lines = append(s.Lines, seqLine{X1: f(x), Y1: f(y), X2: f(redisX - 6), Y2: f(y), Class: "cmd"})
		s.Paths = append(s.Paths, seqPath{D: fmt.Sprintf("M%s %sl-7 -4v8z", f(redisX), f(y)), Class: "cmd"})
		if strings.HasPrefix(e.Result, "ERR") || strings.HasPrefix(e.Result, "NOSCRIPT") || strings.HasPrefix(e.Result, "error") {
			class += " bad"
		}
	case strategytest.EventCall:
		s.Paths = append(s.Paths, seqPath{D: fmt.Sprintf("M%s %sh8v-5l6 5l-6 5v-5z", f(x-14), f(y)), Class: "call"})
	case strategytest.EventReturn:
		s.Paths = append(s.Paths, seqPath{D: fmt.Sprintf("M%s %sh-8v-5l-6 5l6 5v-5z", f(x+14), f(y)), Class: "ret"})
		if strings.HasPrefix(e.Result, "a lease") {
			class += " good"
		} else if e.Result != "nil" {
			class += " bad"
		}
	case strategytest.EventFault:
		switch e.Result {
		case "stopped":
			s.Rects = append(s.Rects, seqRect{X: f(x - 6), Y: f(y - 6), W: "4", H: "12", Class: "fault"}, seqRect{X: f(x + 2), Y: f(y - 6), W: "4", H: "12", Class: "fault"})
		case "resumed":
			s.Paths = append(s.Paths, seqPath{D: fmt.Sprintf("M%s %sv12l10 -6z", f(x-5), f(y-6)), Class: "fault"})
		default:
			s.Paths = append(s.Paths, seqPath{D: fmt.Sprintf("M%s %sl12 12m0 -12l-12 12", f(x-6), f(y-6)), Class: "crash"})
		}
	case strategytest.EventExpiry:
		x = redisX
		s.Paths = append(s.Paths, seqPath{D: fmt.Sprintf("M%s %sh12l-12 12h12z", f(x-6), f(y-6)), Class: "expiry"})
	case strategytest.EventNote:
		s.Paths = append(s.Paths, seqPath{D: fmt.Sprintf("M%s %sl6 6l-6 6l-6 -6z", f(x), f(y-6)), Class: "note"})
	}
	text := shortText(e.Text(), 140)
	s.Texts = append(s.Texts, seqText{X: f(textX), Y: f(y + 4), Class: class, Text: text})
	s.Events++
	return len([]rune(text))
}

// laneLabel is a client's name above its lane: its last word ("3" for
// "worker 3") when the whole name is wider than the lane.
func laneLabel(name string, laneW float64) string {
	if float64(len([]rune(name)))*8 <= laneW-4 {
		return name
	}
	fields := strings.Fields(name)
	return fields[len(fields)-1]
}

// heldTitle is a held bar's tooltip.
func heldTitle(h strategytest.Interval) string {
	if h.Open {
		return fmt.Sprintf("%s believed it held the lock from %s ms to the end of the scenario and beyond", h.Client, msText3(h.From))
	}
	return fmt.Sprintf("%s believed it held the lock from %s to %s ms", h.Client, msText3(h.From), msText3(h.To))
}

// msText3 renders a time on the scenario's clock in ms with one decimal.
func msText3(d time.Duration) string {
	return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))
}

// roundDur renders a span: "0.12 ms", "998 ms", "1.75 s".
func roundDur(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms < 10:
		return fmt.Sprintf("%.2f ms", ms)
	case d < time.Second:
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// shortText cuts s to n characters.
func shortText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
