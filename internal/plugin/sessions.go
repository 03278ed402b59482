package plugin

import "sync"

// SessionSet is the set of a plugin's live sessions (one per attached handle), safe for concurrent
// use: plugins add on Attach, remove on Detach, and walk a snapshot on shutdown or broadcast.
type SessionSet[S comparable] struct {
	mu sync.Mutex
	m  map[S]struct{}
}

// Add records s.
func (ss *SessionSet[S]) Add(s S) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.m == nil {
		ss.m = map[S]struct{}{}
	}
	ss.m[s] = struct{}{}
}

// Remove forgets s.
func (ss *SessionSet[S]) Remove(s S) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.m, s)
}

// All is a snapshot of the live sessions, in no particular order; callers may act on them
// without holding any lock.
func (ss *SessionSet[S]) All() []S {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := make([]S, 0, len(ss.m))
	for s := range ss.m {
		out = append(out, s)
	}
	return out
}
