package locktest

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/lockzoo/lockzoo/strategy"
)

// Recorder is a strategy.Observer that keeps every event it hears, in
// order, for tests to assert on. It is safe for concurrent use; the zero
// value is ready.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

var _ strategy.Observer = (*Recorder)(nil)

// Event is one event a Recorder heard: Kind names the method
// ("acquired", "not-acquired", "released", "extended", "lost",
// "handed-off") and exactly the matching field is set.
type Event struct {
	Kind        string
	Acquired    strategy.AcquiredEvent
	NotAcquired strategy.NotAcquiredEvent
	Released    strategy.ReleasedEvent
	Extended    strategy.ExtendedEvent
	Lost        strategy.LostEvent
	HandedOff   strategy.HandOffEvent
}

// The kinds of Event.
const (
	KindAcquired    = "acquired"
	KindNotAcquired = "not-acquired"
	KindReleased    = "released"
	KindExtended    = "extended"
	KindLost        = "lost"
	KindHandedOff   = "handed-off"
)

// Key returns the key the event is about.
func (e Event) Key() string {
	switch e.Kind {
	case KindAcquired:
		return e.Acquired.Key
	case KindNotAcquired:
		return e.NotAcquired.Key
	case KindReleased:
		return e.Released.Key
	case KindExtended:
		return e.Extended.Key
	case KindLost:
		return e.Lost.Key
	case KindHandedOff:
		return e.HandedOff.Key
	}
	return ""
}

func (r *Recorder) add(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Acquired records e.
func (r *Recorder) Acquired(_ context.Context, e strategy.AcquiredEvent) {
	r.add(Event{Kind: KindAcquired, Acquired: e})
}

// NotAcquired records e.
func (r *Recorder) NotAcquired(_ context.Context, e strategy.NotAcquiredEvent) {
	r.add(Event{Kind: KindNotAcquired, NotAcquired: e})
}

// Released records e.
func (r *Recorder) Released(_ context.Context, e strategy.ReleasedEvent) {
	r.add(Event{Kind: KindReleased, Released: e})
}

// Extended records e.
func (r *Recorder) Extended(_ context.Context, e strategy.ExtendedEvent) {
	r.add(Event{Kind: KindExtended, Extended: e})
}

// Lost records e.
func (r *Recorder) Lost(_ context.Context, e strategy.LostEvent) {
	r.add(Event{Kind: KindLost, Lost: e})
}

// HandedOff records e.
func (r *Recorder) HandedOff(_ context.Context, e strategy.HandOffEvent) {
	r.add(Event{Kind: KindHandedOff, HandedOff: e})
}

// Events returns the events heard so far, oldest first.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// For returns the events heard so far about key, oldest first.
func (r *Recorder) For(key string) []Event {
	var out []Event
	for _, e := range r.Events() {
		if e.Key() == key {
			out = append(out, e)
		}
	}
	return out
}

// Kinds returns the kinds of events, in order, joined by " ", for a
// failure message or a comparison with a want string.
func Kinds(events []Event) string {
	kinds := make([]string, len(events))
	for i, e := range events {
		kinds[i] = e.Kind
	}
	return strings.Join(kinds, " ")
}

// Reset forgets the events heard so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.events = nil
	r.mu.Unlock()
}

// String lists the events heard so far, one a line, for failure messages.
func (r *Recorder) String() string {
	var b strings.Builder
	for _, e := range r.Events() {
		fmt.Fprintf(&b, "%s %q\n", e.Kind, e.Key())
	}
	return b.String()
}
