package gateway

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
)

// worker runs one handle's jobs one at a time, in the order they were added. It keeps no goroutine
// while idle: one is started when work arrives and ends when the queue is empty. This is what makes a
// handle's messages reach the plugin serially and in order, while different handles run in parallel.
type worker struct {
	log     *slog.Logger
	mu      sync.Mutex
	queue   []func()
	running bool
}

func (w *worker) add(job func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue = append(w.queue, job)
	if !w.running {
		w.running = true
		go w.run()
	}
}

func (w *worker) run() {
	for {
		w.mu.Lock()
		if len(w.queue) == 0 {
			w.running = false
			w.queue = nil // let a burst's backing array go
			w.mu.Unlock()
			return
		}
		job := w.queue[0]
		w.queue[0] = nil
		w.queue = w.queue[1:]
		w.mu.Unlock()
		w.runJob(job)
	}
}

// runJob isolates the server from a panicking plugin callback: the handle's queue keeps going.
func (w *worker) runJob(job func()) {
	defer func() {
		if r := recover(); r != nil {
			w.log.Error("handle job panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	job()
}

// guard runs f and turns a panic into an error, for plugin calls whose caller must answer anyway.
func guard(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plugin panicked: %v", r)
		}
	}()
	f()
	return nil
}
