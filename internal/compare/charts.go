package compare

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// A chart is drawn on the server as plain SVG geometry; the template only
// places the shapes. Horizontal bars: one row per label, one bar per series
// within a row.

// series is one set of bars, drawn in one colour; NaN values are not drawn.
type series struct {
	Name   string
	Color  string
	Values []float64
}

// panel is one horizontal-bar chart, placed at X, Y inside an SVG.
type panel struct {
	X, Y, W, H string
	Title      string
	Note       string
	Labels     []svgText
	Bars       []svgBar
	Ticks      []svgTick
	Ref        *svgRef
	Legend     []svgLegend
	AxisY1     string // top of the plot area, for the axis line
	AxisY2     string // bottom of the plot area
	PlotX      string // left edge of the plot area
}

type svgText struct{ X, Y, Text string }

type svgBar struct {
	X, Y, W, H string
	Color      string
	Value      svgText // the value printed at the bar's end
	Title      string  // tooltip
}

type svgTick struct{ X, Y1, Y2, LabelY, Text string }

// svgRef is a vertical reference line across the plot (the raw ceiling).
type svgRef struct{ X, Y1, Y2, LabelX, LabelY, Anchor, Text string }

type svgLegend struct{ X, Y, TextX, TextY, Color, Text string }

// Layout of a panel, in SVG user units.
const (
	labelWidth = 150.0 // technique names, left of the plot, at least
	// labelCharW is the widest a character of a label gets: the labels are
	// monospace at 12px (report.html), 0.6em a character, and a little
	// more for fonts that run wider.
	labelCharW = 7.6
	labelGap   = 14.0 // between a label's end and the plot, and its start and the panel's edge
	valueRoom  = 70.0 // right of the longest bar, for its value
	titleRoom  = 44.0 // title and legend above the plot
	axisRoom   = 28.0 // tick labels below the plot
	barHeight  = 14.0
	rowGap     = 10.0
)

// hbars lays out one panel of width w at x, y: a row per label, a bar per
// series in each row, scaled so that top (or, when larger, the largest
// value or the reference) fills the plot. format renders values and tick
// labels; ref, when not nil, is drawn as a dashed vertical line labelled
// refText.
func hbars(x, y, w float64, title, note string, labels []string, ss []series, top float64, format func(float64) string, ref *float64, refText string) panel {
	for _, s := range ss {
		for _, v := range s.Values {
			if !math.IsNaN(v) {
				top = math.Max(top, v)
			}
		}
	}
	if ref != nil {
		top = math.Max(top, *ref)
	}
	top, marks := niceScale(top)
	rowH := float64(len(ss))*barHeight + rowGap
	plotX, plotY := labelRoom(labels), titleRoom
	plotW := w - plotX - valueRoom
	plotH := float64(len(labels)) * rowH
	scale := func(v float64) float64 { return plotW * v / top }
	p := panel{
		X: f(x), Y: f(y), W: f(w), H: f(plotY + plotH + axisRoom),
		Title: title, Note: note, AxisY1: f(plotY), AxisY2: f(plotY + plotH), PlotX: f(plotX),
	}
	for i, label := range labels {
		rowY := plotY + float64(i)*rowH + rowGap/2
		p.Labels = append(p.Labels, svgText{X: f(plotX - 8), Y: f(rowY + float64(len(ss))*barHeight/2 + 4), Text: label})
		for j, s := range ss {
			if i >= len(s.Values) || math.IsNaN(s.Values[i]) {
				continue
			}
			v := s.Values[i]
			by := rowY + float64(j)*barHeight
			bw := math.Max(scale(v), 1)
			p.Bars = append(p.Bars, svgBar{
				X: f(plotX), Y: f(by + 1), W: f(bw), H: f(barHeight - 2), Color: s.Color,
				Value: svgText{X: f(plotX + bw + 4), Y: f(by + barHeight - 3), Text: format(v)},
				Title: fmt.Sprintf("%s, %s: %s", label, s.Name, format(v)),
			})
		}
	}
	for _, t := range marks {
		tx := plotX + scale(t)
		p.Ticks = append(p.Ticks, svgTick{X: f(tx), Y1: f(plotY), Y2: f(plotY + plotH), LabelY: f(plotY + plotH + 16), Text: format(t)})
	}
	if ref != nil {
		rx := plotX + scale(*ref)
		anchor := "start"
		if rx > plotX+plotW/2 {
			anchor = "end" // keep the label inside the panel
		}
		p.Ref = &svgRef{X: f(rx), Y1: f(plotY - 6), Y2: f(plotY + plotH), LabelX: f(rx), LabelY: f(plotY - 10), Anchor: anchor, Text: refText}
	}
	if len(ss) > 1 {
		lx := 0.0
		for _, s := range ss {
			p.Legend = append(p.Legend, svgLegend{X: f(lx), Y: f(24), TextX: f(lx + 16), TextY: f(34), Color: s.Color, Text: s.Name})
			lx += 16 + 7*float64(len(s.Name)) + 24
		}
	}
	return p
}

// labelRoom returns the width left of a panel's plot for labels: room for
// the longest in full ("getset_timestamp/method2" and longer peers' names),
// at least labelWidth.
func labelRoom(labels []string) float64 {
	longest := 0
	for _, l := range labels {
		longest = max(longest, utf8.RuneCountInString(l))
	}
	return math.Max(labelWidth, float64(longest)*labelCharW+labelGap)
}

// niceScale returns the top of an axis that holds v, a round number
// (1, 2, 3, 4, 5, 6, 8 or 10 times a power of ten), and the ticks from 0 to
// it at round steps.
func niceScale(v float64) (top float64, marks []float64) {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		v = 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(v)))
	steps := map[float64]int{1: 5, 2: 4, 3: 3, 4: 4, 5: 5, 6: 3, 8: 4, 10: 5}
	for _, m := range []float64{1, 2, 3, 4, 5, 6, 8, 10} {
		if v <= m*mag*(1+1e-9) {
			top = m * mag
			n := steps[m]
			for i := range n + 1 {
				marks = append(marks, top*float64(i)/float64(n))
			}
			return top, marks
		}
	}
	return 10 * mag, []float64{0, 10 * mag}
}

// f renders an SVG coordinate.
func f(v float64) string { return fmt.Sprintf("%.1f", v) }
