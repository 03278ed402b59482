package ovs

import (
	"errors"
	"runtime"
	"sync"
)

// spawner forks a switch's daemons from one OS thread kept for them until the switch closes.
// The daemons carry a parent-death signal, and Linux sends it when the *thread* that forked them
// exits, not the process. Go ends threads: a goroutine that locks its thread and returns takes
// the thread with it (the emulator's real-time senders and namespace switches do), and any thread
// may have run Start or Restart before. Forking from a thread of the switch's own, which exits
// only after Close has stopped the daemons, makes the signal mean what it should: the daemons die
// with this process.
type spawner struct {
	req chan func()

	mu     sync.Mutex // guards closed against a run racing close
	closed bool
}

func newSpawner() *spawner {
	s := &spawner{req: make(chan func())}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine, after close
		for f := range s.req {
			f()
		}
	}()
	return s
}

// run calls f on the spawner's thread and waits for it.
func (s *spawner) run(f func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("ovs: switch closed")
	}
	done := make(chan error, 1)
	s.req <- func() { done <- f() }
	return <-done
}

// close ends the thread (after the daemons it forked have been stopped).
func (s *spawner) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.req)
	}
}
