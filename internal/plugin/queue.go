package plugin

import "context"

// QueueError is an error of Queue.Enqueue, worded as Janus's plugins word it to the client.
type QueueError string

func (e QueueError) Error() string { return string(e) }

// The errors of Queue.Enqueue.
const (
	ErrDetached  QueueError = "Handle detached"
	ErrQueueFull QueueError = "Too many pending requests"
)

// Queue is a handle's worker, as Janus's per-handle message thread: the asynchronous requests it
// is given run one at a time, in order, on its own goroutine, until Close. A plugin acks a request
// it enqueued and pushes its result as an event.
type Queue struct {
	ctx    context.Context
	cancel context.CancelFunc
	msgs   chan Message
	done   chan struct{}
}

// NewQueue starts a worker calling handle for each message, with room for size waiting ones.
func NewQueue(size int, handle func(Message)) *Queue {
	ctx, cancel := context.WithCancel(context.Background())
	q := &Queue{ctx: ctx, cancel: cancel, msgs: make(chan Message, size), done: make(chan struct{})}
	go q.run(handle)
	return q
}

func (q *Queue) run(handle func(Message)) {
	defer close(q.done)
	for {
		select {
		case <-q.ctx.Done():
			return
		case m := <-q.msgs:
			handle(m)
		}
	}
}

// Context is done once the queue is closed: the requests it runs derive theirs from it, so that a
// detached handle stops waiting for a negotiation.
func (q *Queue) Context() context.Context { return q.ctx }

// Enqueue queues m without waiting: ErrDetached once the queue is closed, ErrQueueFull when size
// requests already wait.
func (q *Queue) Enqueue(m Message) error {
	if q.ctx.Err() != nil {
		return ErrDetached
	}
	select {
	case q.msgs <- m:
		return nil
	default:
		return ErrQueueFull
	}
}

// Close stops the worker and waits for the request it runs, if any, to return. Requests still
// waiting are dropped. It is safe to call more than once.
func (q *Queue) Close() {
	q.cancel()
	<-q.done
}
