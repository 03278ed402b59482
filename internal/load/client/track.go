package client

import (
	"strconv"
	"strings"
	"sync"
	"time"

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
		readRTP(track, observe)
	}()
}

// readRTP hands each packet Pion delivers on track to observe, until the track ends.
func readRTP(track *webrtc.TrackRemote, observe func(pkt []byte)) {
	buf := make([]byte, 1500)
	for {
		n, _, err := track.Read(buf)
		if err != nil {
			return
		}
		observe(buf[:n])
	}
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

// readLightTrack is ReadTrack for a light receiver's stream: what Pion delivers (the packets the
// tap gave on) goes to st.fromPion, and sender reports are kept for the reception reports.
func readLightTrack(wg *sync.WaitGroup, track *webrtc.TrackRemote, receiver *webrtc.RTPReceiver, st *Stream, now func() time.Duration) {
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			pkts, _, err := receiver.ReadRTCP()
			if err != nil {
				return
			}
			for _, p := range pkts {
				if sr, ok := p.(*rtcp.SenderReport); ok && sr.SSRC == uint32(track.SSRC()) {
					st.noteSenderReport(sr, now())
				}
			}
		}
	}()
	go func() {
		defer wg.Done()
		readRTP(track, func(pkt []byte) { st.fromPion(pkt, now()) })
	}()
}

// extmapID is the id a session description gives a header extension, or 0.
func extmapID(sdp, uri string) uint8 {
	for _, line := range strings.Split(sdp, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "a=extmap:")
		if !ok {
			continue
		}
		id, u, ok := strings.Cut(rest, " ")
		if !ok || strings.Fields(u)[0] != uri {
			continue
		}
		id, _, _ = strings.Cut(id, "/")
		if n, err := strconv.Atoi(id); err == nil && n > 0 && n < 256 {
			return uint8(n)
		}
	}
	return 0
}
