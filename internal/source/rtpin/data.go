package rtpin

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/strata-rtc/strata/internal/sfu"
)

// DataTrack is a data stream's messages: each UDP datagram that arrives is one message, handed to
// every subscriber (a viewer's data channel). With BufferMsg the last message is kept and given
// to each new subscriber at once.
type DataTrack struct {
	text, buffer bool

	mu   sync.Mutex // serialises subscriber changes and the kept message
	subs atomic.Pointer[[]*dataSub]
	last []byte
	has  bool
}

type dataSub struct{ f func(msg []byte, text bool) }

func newDataTrack(text, buffer bool) *DataTrack {
	d := &DataTrack{text: text, buffer: buffer}
	d.subs.Store(&[]*dataSub{})
	return d
}

// Text reports whether the messages are text (else binary).
func (d *DataTrack) Text() bool { return d.text }

// Subscribe calls f with every message (on the source's reader goroutine: f must not block, and
// msg is valid only during the call) until cancel is called.
func (d *DataTrack) Subscribe(f func(msg []byte, text bool)) (cancel func()) {
	sub := &dataSub{f: f}
	d.mu.Lock()
	old := *d.subs.Load()
	next := append(append(make([]*dataSub, 0, len(old)+1), old...), sub)
	d.subs.Store(&next)
	if d.buffer && d.has {
		f(d.last, d.text)
	}
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		old := *d.subs.Load()
		next := make([]*dataSub, 0, len(old))
		for _, x := range old {
			if x != sub {
				next = append(next, x)
			}
		}
		d.subs.Store(&next)
	}
}

// deliver hands one message to every subscriber.
func (d *DataTrack) deliver(msg []byte) {
	if d.buffer {
		d.mu.Lock()
		d.last, d.has = append(d.last[:0], msg...), true
		d.mu.Unlock()
	}
	for _, s := range *d.subs.Load() {
		s.f(msg, d.text)
	}
}

// readData relays a data socket's datagrams until it closes.
func (s *Source) readData(st *stream, c *net.UDPConn) {
	defer s.wg.Done()
	buf := make([]byte, dataBufSize)
	for {
		n, err := c.Read(buf)
		if err != nil {
			if s.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		st.lastAt.Store(int64(sfu.Now()))
		st.messages.Add(1)
		st.data.deliver(buf[:n])
	}
}
