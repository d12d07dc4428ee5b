// Package recent remembers names for a while.
package recent

import (
	"sync"
	"time"
)

// Set remembers names added within a horizon. Its zero value is empty and
// ready; it is safe for concurrent use.
type Set struct {
	mu     sync.Mutex
	byName map[string]struct{}
	order  []added // in the order they were added
}

type added struct {
	name string
	at   time.Time
}

// Add remembers name as added at now (a name already there keeps its
// time), and forgets those added more than horizon before now.
func (s *Set) Add(name string, now time.Time, horizon time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for n < len(s.order) && now.Sub(s.order[n].at) > horizon {
		delete(s.byName, s.order[n].name)
		n++
	}
	s.order = append(s.order[:0], s.order[n:]...)
	if s.byName == nil {
		s.byName = map[string]struct{}{}
	}
	if _, ok := s.byName[name]; !ok {
		s.byName[name] = struct{}{}
		s.order = append(s.order, added{name, now})
	}
}

// Has reports whether name was added and not forgotten yet.
func (s *Set) Has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.byName[name]
	return ok
}
