package strategytest

import (
	"strings"
	"testing"
	"time"
)

// TestFoldWaits: a call that sent many commands keeps its first and last
// keepEnds and one note counting the rest, repeats included; a short call
// and another client's events are kept as they are.
func TestFoldWaits(t *testing.T) {
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	events := []Event{{At: 0, Kind: EventCall, Client: "B", Op: "Lock"}}
	for i := range 10 {
		e := Event{At: ms(i + 1), Kind: EventCommand, Client: "B", Op: "SET", Result: "nil"}
		if i == 5 {
			e.Repeats, e.Until = 4, ms(6)
		}
		events = append(events, e)
		if i == 2 {
			events = append(events, Event{At: ms(i + 1), Kind: EventFault, Client: "A", Op: "p", Result: "stopped"})
		}
	}
	events = append(events,
		Event{At: ms(11), Kind: EventReturn, Client: "B", Op: "Lock", Result: "a lease"},
		Event{At: ms(12), Kind: EventCall, Client: "C", Op: "TryLock"},
		Event{At: ms(12), Kind: EventCommand, Client: "C", Op: "SET", Result: "nil"},
		Event{At: ms(13), Kind: EventReturn, Client: "C", Op: "TryLock", Result: "ErrNotAcquired"})
	got := foldWaits(events)
	var kinds []string
	for _, e := range got {
		kinds = append(kinds, e.Client+":"+string(e.Kind))
	}
	want := "B:call B:command B:command B:command A:fault B:note B:command B:command B:command B:return C:call C:command C:return"
	if strings.Join(kinds, " ") != want {
		t.Errorf("foldWaits() = %s, want %s", strings.Join(kinds, " "), want)
	}
	for _, e := range got {
		if e.Kind == EventNote && !strings.Contains(e.Op, "B sent 8 more commands over 3ms") {
			t.Errorf("fold note = %q, want it to count 8 commands (4 of them repeats) over 3ms", e.Op)
		}
	}
}
