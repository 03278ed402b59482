package wsapi

import "sync"

// eventHeadroom: events may take a connection's outbox up to this many times its limit. Reading
// stops at the limit, but events keep coming (a room's activity, the answers to requests already
// taken), and a client that stays this far behind is not reading: it is cut off instead.
const eventHeadroom = 4

// outbox holds a connection's outgoing messages in order, for its one writer. It never loses a
// reply: the reader takes a slot (acquire) before it reads a request, and waits while the replies
// owed and the messages waiting reach the limit, so a client that sends faster than it reads is
// slowed down by TCP flow control instead of having its replies dropped. Events cannot wait (they
// come from plugin goroutines): they are refused once the outbox is far over its limit, and the
// connection is then closed.
type outbox struct {
	limit int

	mu       sync.Mutex
	msgs     [][]byte // waiting, oldest first from head
	head     int
	writing  int // taken by the writer, not yet written
	owed     int // requests read whose reply is not queued yet
	closed   bool
	awaiting bool          // the reader waits for room
	more     chan struct{} // wakes the writer
	room     chan struct{} // wakes the reader
}

func newOutbox(limit int) *outbox {
	return &outbox{limit: limit, more: make(chan struct{}, 1), room: make(chan struct{}, 1)}
}

// pending counts what the client has not taken yet. Called with o.mu held.
func (o *outbox) pending() int { return len(o.msgs) - o.head + o.writing + o.owed }

// acquire waits until the client has room for one more reply and reserves it; it reports false when
// stop closes first.
func (o *outbox) acquire(stop <-chan struct{}) bool {
	for {
		o.mu.Lock()
		if o.pending() < o.limit {
			o.owed++
			o.awaiting = false
			o.mu.Unlock()
			return true
		}
		o.awaiting = true
		o.mu.Unlock()
		select {
		case <-o.room:
		case <-stop:
			return false
		}
	}
}

// reply queues the answer to a request that acquired its slot. It is never refused while the
// connection is open.
func (o *outbox) reply(b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.owed--
	o.pushLocked(b)
}

// event queues an event; false means the client is so far behind that it must be cut off.
func (o *outbox) event(b []byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed && len(o.msgs)-o.head+o.writing >= eventHeadroom*o.limit {
		return false
	}
	o.pushLocked(b)
	return true
}

func (o *outbox) pushLocked(b []byte) {
	if o.closed {
		return
	}
	o.msgs = append(o.msgs, b)
	select {
	case o.more <- struct{}{}:
	default:
	}
}

// next hands the writer the oldest message; it stays pending until written is called.
func (o *outbox) next() ([]byte, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.head == len(o.msgs) {
		return nil, false
	}
	b := o.msgs[o.head]
	o.msgs[o.head] = nil
	o.head++
	if o.head == len(o.msgs) {
		// Empty: start over, and let a burst's large backing array go.
		o.head = 0
		if cap(o.msgs) > o.limit {
			o.msgs = nil
		} else {
			o.msgs = o.msgs[:0]
		}
	}
	o.writing++
	return b, true
}

// written records that the writer has handed a message to the socket, and wakes the reader if that
// made room.
func (o *outbox) written() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writing--
	if o.awaiting && o.pending() < o.limit {
		select {
		case o.room <- struct{}{}:
		default:
		}
	}
}

// waiting is the number of messages not yet written (for the log line of a cut-off).
func (o *outbox) waiting() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.msgs) - o.head + o.writing
}

// close discards what is waiting; later messages are ignored (the connection is gone).
func (o *outbox) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	clear(o.msgs)
	o.msgs, o.head = nil, 0
}
