package videoroom

import (
	"sync"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/sfu"
)

// ssrcLayer returns the substream of a media SSRC of SSRC simulcast.
func (st *pubStream) ssrcLayer(ssrc uint32) (int, bool) {
	for i, l := range st.layers {
		if l.ssrc == ssrc {
			return i, true
		}
	}
	return 0, false
}

// layerSources joins the two streams of an upper layer of SSRC simulcast, its media and its RTX,
// which are read on two goroutines: the receiver takes one layer's packets one at a time (mu), and
// a repaired packet waits until the media stream has reached it (newest).
type layerSources struct {
	mu      sync.Mutex
	newest  uint16 // newest sequence number the media stream delivered (under mu)
	have    bool   // newest is set
	once    sync.Once
	started chan struct{} // closed at the first media packet
}

// mediaWritten records a media packet the receiver took (mu held).
func (s *layerSources) mediaWritten(seq uint16) {
	if !s.have || int16(seq-s.newest) > 0 {
		s.newest, s.have = seq, true
	}
}

func (s *layerSources) mediaStarted() { s.once.Do(func() { close(s.started) }) }

// rtxWait bounds how long a repaired packet ahead of the media stream waits for it.
const rtxWait = 20 * time.Millisecond

// receiveUpperLayers receives the layers of SSRC simulcast above the base layer, and their RTX
// streams, which Pion does not receive (ssrcsimulcast.go). pt is the stream's payload type, which
// repaired packets get back.
func (pub *publisher) receiveUpperLayers(p *peer.Peer, like *webrtc.RTPReceiver, st *pubStream, pt uint8) {
	for i, l := range st.layers {
		st.recv.SetLayerSSRC(i, l.ssrc)
		if i == 0 {
			continue
		}
		src := &layerSources{started: make(chan struct{})}
		if err := p.ReceiveSSRC(like, l.ssrc, false, func(t *webrtc.TrackRemote) { go st.read(i, t, src) }); err != nil {
			pub.s.log.Warn("cannot receive a simulcast layer", "mid", st.mid, "ssrc", l.ssrc, "err", err)
			continue
		}
		if l.rtx == 0 {
			continue
		}
		onTrack := func(t *webrtc.TrackRemote) { go st.readRTX(i, l.ssrc, pt, t, src, p.Closed()) }
		if err := p.ReceiveSSRC(like, l.rtx, true, onTrack); err != nil {
			pub.s.log.Warn("cannot receive the RTX stream of a simulcast layer", "mid", st.mid, "ssrc", l.rtx, "err", err)
		}
	}
}

// readRTX feeds the packets an RTX stream repairs into the stream's receiver as one layer, until
// the track ends. The receiver's duplicate filter drops those it already has (Chromium probes its
// uplink by resending recent packets over RTX). A repair is for a packet the media stream has
// passed; one read ahead of the media stream (the two are read on their own goroutines, in bursts
// after Pion let go of them) waits for it, up to rtxWait: taken first, it could be refused by the
// selector (a layer switch waiting for the keyframe that precedes it) and the original then
// dropped as a duplicate.
func (st *pubStream) readRTX(layer int, ssrc uint32, pt uint8, track *webrtc.TrackRemote, src *layerSources, closed <-chan struct{}) {
	select {
	case <-src.started:
	case <-closed:
		return
	}
	buf := make([]byte, 1500)
	for {
		n, _, err := track.Read(buf)
		if err != nil {
			return
		}
		pkt, ok := media.UnwrapRTX(buf[:n], ssrc, pt)
		if !ok {
			continue
		}
		seq := uint16(pkt[2])<<8 | uint16(pkt[3])
		src.mu.Lock()
		for waited := time.Duration(0); int16(seq-src.newest) > 0 && waited < rtxWait; waited += time.Millisecond {
			src.mu.Unlock()
			time.Sleep(time.Millisecond)
			src.mu.Lock()
		}
		st.recv.WriteRTP(layer, pkt, sfu.Now())
		src.mu.Unlock()
	}
}
