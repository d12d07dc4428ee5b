// Package inflight tracks, by name, requests that still wait for some of
// their answers.
package inflight

import "sync"

// Entry is a request's state in a Map; embed it, and return it from
// Tracking. It is guarded by the Map.
type Entry struct {
	name     string // the name it is tracked under
	in       bool   // in the map
	finished bool   // every answer came: never tracked again
}

// Name is the name the request was tracked under, once Track ran.
func (e *Entry) Name() string { return e.name }

// Tracked is a request a Map can track.
type Tracked interface {
	comparable
	Tracking() *Entry
}

// Map tracks requests by name; its zero value is empty and ready, and it
// is safe for concurrent use.
type Map[T Tracked] struct {
	mu sync.Mutex
	m  map[string]T
}

// Track makes v name's request, unless v finished already.
func (f *Map[T]) Track(name string, v T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := v.Tracking()
	if e.finished {
		return
	}
	if f.m == nil {
		f.m = map[string]T{}
	}
	e.name, e.in = name, true
	f.m[name] = v
}

// Finish records that every answer of v came, and stops tracking it.
func (f *Map[T]) Finish(v T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := v.Tracking()
	e.finished = true
	if e.in && f.m[e.name] == v {
		delete(f.m, e.name)
	}
}

// Lookup returns name's tracked request, or the zero T.
func (f *Map[T]) Lookup(name string) T {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[name]
}
