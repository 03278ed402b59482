package dc

import (
	"context"
	"io"

	"github.com/pion/webrtc/v4"
)

// Get asks pc's peer for the stream called name on a new low-priority channel and writes it to w
// (see Receive). pc must have negotiated its SCTP association (an application m-line) already,
// so the channel opens without renegotiation.
func Get(ctx context.Context, pc *webrtc.PeerConnection, name string, w io.Writer, opts Options) (Stats, error) {
	ch, err := Open(pc, VerbGet, name)
	if err != nil {
		return Stats{}, err
	}
	return Receive(ctx, ch, w, opts)
}

// Put sends what r yields to pc's peer on a new low-priority channel, to be stored as name (see
// Send and Get).
func Put(ctx context.Context, pc *webrtc.PeerConnection, name string, r io.Reader, opts Options) (Stats, error) {
	ch, err := Open(pc, VerbPut, name)
	if err != nil {
		return Stats{}, err
	}
	return Send(ctx, ch, r, opts)
}

// Open creates the low-priority channel for verb and name on pc, for a caller that drives it with
// Send or Receive itself.
func Open(pc *webrtc.PeerConnection, verb, name string) (*webrtc.DataChannel, error) {
	label := Label(verb, name)
	if _, _, err := ParseLabel(label); err != nil {
		return nil, err
	}
	return pc.CreateDataChannel(label, Init())
}
