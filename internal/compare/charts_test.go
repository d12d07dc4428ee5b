package compare

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/locktest"
)

// monoCharW is a character's width in the labels' monospace 12px font
// (report.html): 0.6em.
const monoCharW = 0.6 * 12

// TestChartLabelsFit: every technique name, the longest included, is drawn
// in full inside its panel (it used to lose its start: "et_timestamp/
// method1"), and the plot keeps room beside it, in the speed chart's wide
// panel and the contended chart's half-width ones.
func TestChartLabelsFit(t *testing.T) {
	locktest.NoLeaks(t)
	tests := []struct {
		name   string
		width  float64
		labels []string
	}{
		{"short names", 960, []string{"redlock", "set_nx_ex"}},
		{"lockzoo's techniques, wide panel", 960, []string{"setnx_expire", "getset_timestamp/method1", "getset_timestamp/method2", "redlock"}},
		{"lockzoo's techniques, half panel", 470, []string{"setnx_expire", "getset_timestamp/method1", "getset_timestamp/method2", "redlock"}},
		{"the peers, half panel", 470, []string{"lua_release", "redsync", "bsm_redislock", "rueidislock", "redsync_redlock"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			values := make([]float64, len(tt.labels))
			for i := range values {
				values[i] = float64(i + 1)
			}
			p := hbars(0, 0, tt.width, "title", "", tt.labels, []series{{Name: "s", Values: values}}, 0, func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }, nil, "")
			require.Len(t, p.Labels, len(tt.labels), "labels drawn")
			plotX := coord(t, p.PlotX)
			for _, l := range p.Labels {
				end := coord(t, l.X) // text-anchor="end"
				start := end - float64(utf8.RuneCountInString(l.Text))*monoCharW
				assert.GreaterOrEqual(t, start, 0.0, "label %q starts at x=%.1f, want inside the panel (x >= 0)", l.Text, start)
				assert.Less(t, end, plotX, "label %q ends at x=%.1f, want left of the plot at %.1f", l.Text, end, plotX)
			}
			assert.GreaterOrEqual(t, tt.width-plotX-valueRoom, 150.0, "plot width beside labels %q", strings.Join(tt.labels, ", "))
		})
	}
}

// TestChartsScrollOnPhones: each bar chart sits in a sideways-scrolling
// box and keeps a minimum width (svg.chart), so that on a phone it scrolls
// rather than shrink its labels unreadable.
func TestChartsScrollOnPhones(t *testing.T) {
	locktest.NoLeaks(t)
	root := writeParsed(t, brokenReport())
	charts := root.find(hasClass("svg", "chart"))
	require.NotEmpty(t, charts, "svg.chart elements in the report")
	var inScroll int
	for _, d := range root.find(hasClass("div", "scroll")) {
		inScroll += len(d.find(hasClass("svg", "chart")))
	}
	assert.Equal(t, len(charts), inScroll, "charts inside a div.scroll, of %d", len(charts))
	style := root.find(named("style"))
	require.Len(t, style, 1, "style elements")
	assert.Contains(t, style[0].text.String(), "svg.chart { min-width:", "report.html's style")
}

func coord(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err, "coordinate %q", s)
	return v
}
