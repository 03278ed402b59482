package client

import (
	"sync"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"
)

// ReadTrack hands every RTP packet of a received track to observe until the track ends, and
// meanwhile reads the receiver's RTCP (sender reports feed the receiver-report interceptor: the
// round-trip times at the server). Both run in goroutines counted in wg. pkt is only valid during
// the call.
func ReadTrack(wg *sync.WaitGroup, track *webrtc.TrackRemote, receiver *webrtc.RTPReceiver, observe func(pkt []byte)) {
	wg.Add(2)
	go func() {
		defer wg.Done()
		drainRTCP(receiver)
	}()
	go func() {
		defer wg.Done()
		buf := make([]byte, 1500)
		for {
			n, _, err := track.Read(buf)
			if err != nil {
				return
			}
			observe(buf[:n])
		}
	}()
}

// drainRTCP reads r's RTCP until it fails, which runs the interceptors' RTCP handling (receiver
// reports, NACKs); the packets themselves are theirs.
func drainRTCP(r interface {
	ReadRTCP() ([]rtcp.Packet, interceptor.Attributes, error)
}) {
	for {
		if _, _, err := r.ReadRTCP(); err != nil {
			return
		}
	}
}
