// Package syncbuf is a bytes.Buffer that goroutines may write and read at once: what tests give a
// logger (a server's, a node's, a child process's output) and then search.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a goroutine-safe bytes.Buffer; the zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Tail returns the last n bytes written, from a line boundary on ("…" marks what was cut).
func (s *Buffer) Tail(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.b.Bytes()
	if len(b) <= n {
		return string(b)
	}
	b = b[len(b)-n:]
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return "…\n" + string(b)
}
