package compare

import (
	"fmt"
	"strings"

	"github.com/lockzoo/lockzoo/strategy/strategytest"
)

// figureGroup is one technique's drawings, in scenario order.
type figureGroup struct {
	Technique string
	Figures   []figure
}

// figure is one scenario result drawn as a sequence diagram.
type figure struct {
	ID      string // the anchor the GUARANTEES cell links to
	Title   string // "set_nx_ex · owner-safe-release"
	Verdict string // "OwnerSafeRelease not claimed, violated 1/1"
	Class   string // the cell's class, for the verdict's colour
	Account string
	Seq     seq
}

// figureIDs names the anchors of the drawings. Technique names hold "/"
// (getset_timestamp/method1), which a fragment would have to escape, so an
// id keeps letters, digits, "-" and "_", writes "/" as ".", anything else
// as "_", and adds a number where two names would otherwise meet.
type figureIDs map[string]bool

func (ids figureIDs) of(technique, scenario string) string {
	id := "tl-" + idPart(technique) + "--" + idPart(scenario)
	for n := 2; ids[id]; n++ {
		id = fmt.Sprintf("tl-%s--%s-%d", idPart(technique), idPart(scenario), n)
	}
	ids[id] = true
	return id
}

func idPart(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == '/':
			b.WriteByte('.')
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// newFigure draws r; cell is its GUARANTEES cell.
func newFigure(id string, r strategytest.Result, cell matrixCell) figure {
	verdict := fmt.Sprintf("%s %s, %s", r.Property, cell.Claim, cell.Verdict)
	if cell.Counts != "" {
		verdict += " (" + cell.Counts + ")"
	}
	return figure{
		ID: id, Title: r.Technique + " · " + r.Scenario, Verdict: verdict,
		Class: cell.Class, Account: r.Account, Seq: sequence(r),
	}
}
