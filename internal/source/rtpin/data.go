package rtpin

import (
	"errors"
	"net"

	"github.com/strata-rtc/strata/internal/sfu"
)

// DataTrack is a data stream's messages: each UDP datagram that arrives is one message, handed to
// every sink of its sfu.DataReceiver (a viewer's data channel). With BufferMsg the last message is
// kept and given to each new sink at once.
type DataTrack struct {
	text bool
	recv *sfu.DataReceiver
}

func newDataTrack(text, buffer bool) *DataTrack {
	return &DataTrack{text: text, recv: sfu.NewDataReceiver(buffer)}
}

// Text reports whether the messages are text (else binary).
func (d *DataTrack) Text() bool { return d.text }

// Receiver fans the messages out: add a sink per viewer (sfu.NewPionDataSink). It is never
// closed, so a viewer's channel outlives the source (a viewer may switch to another mountpoint).
func (d *DataTrack) Receiver() *sfu.DataReceiver { return d.recv }

// deliver hands one message to every sink.
func (d *DataTrack) deliver(msg []byte) { d.recv.Write(msg, !d.text) }

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
