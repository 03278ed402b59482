package sfu

import (
	"unsafe"

	"github.com/pion/webrtc/v4"
)

// pionChannel sends a sink's messages on a Pion data channel.
type pionChannel struct{ dc *webrtc.DataChannel }

func (c pionChannel) Send(msg []byte, binary bool) error {
	if binary {
		return c.dc.Send(msg)
	}
	if len(msg) == 0 {
		return c.dc.SendText("")
	}
	// SendText copies the string into SCTP chunks before returning, so the string may share msg's
	// bytes: this saves a copy per message and subscriber.
	return c.dc.SendText(unsafe.String(&msg[0], len(msg)))
}

func (c pionChannel) BufferedAmount() uint64 { return c.dc.BufferedAmount() }

func (c pionChannel) Close() error { return c.dc.Close() }

// NewPionDataSink makes a sink for a Pion data channel (typically created by the server on the
// subscriber's PeerConnection): it sends once the channel opens and drains its queue whenever the
// channel's SCTP send buffer falls to half of cfg.BufferedHigh.
func NewPionDataSink(dc *webrtc.DataChannel, cfg DataSinkConfig) *DataSink {
	s := NewDataSink(pionChannel{dc}, cfg)
	dc.SetBufferedAmountLowThreshold(cfg.BufferedHigh / 2)
	dc.OnBufferedAmountLow(s.Drain) // Pion calls it from the association's reader, with no lock held
	dc.OnOpen(s.Opened)             // also called when the channel is open already
	return s
}
