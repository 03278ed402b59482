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
	return Attach(ch, opts).Receive(ctx, w)
}

// Put sends what r yields to pc's peer on a new low-priority channel, to be stored as name (see
// Send and Get).
func Put(ctx context.Context, pc *webrtc.PeerConnection, name string, r io.Reader, opts Options) (Stats, error) {
	ch, err := Open(pc, VerbPut, name)
	if err != nil {
		return Stats{}, err
	}
	return Attach(ch, opts).Send(ctx, r)
}

// Open creates the low-priority channel for verb and name on pc, for a caller that drives it
// itself: Attach it at once (before pc connects, or right after Open), then Send or Receive.
func Open(pc *webrtc.PeerConnection, verb, name string) (*webrtc.DataChannel, error) {
	label := Label(verb, name)
	if _, _, err := ParseLabel(label); err != nil {
		return nil, err
	}
	return pc.CreateDataChannel(label, Init())
}
