package sfu

import (
	"sync"
	"testing"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
)

// rtcpOf marshals a compound RTCP packet, as a subscriber sends one (safe on any goroutine).
func rtcpOf(t testing.TB, pkts ...rtcp.Packet) []byte {
	b, err := rtcp.Marshal(pkts)
	if err != nil {
		t.Errorf("marshalling RTCP: %v", err)
	}
	return b
}

// fakeBinding plays Pion's side of a bound track: it hands out SSRCs and payload types, and records
// (or only counts) what the down-track writes.
type fakeBinding struct {
	rtx    bool
	record bool
	exts   []webrtc.RTPHeaderExtensionParameter

	mu      sync.Mutex
	packets []sentPacket
	count   int
}

type sentPacket struct {
	hdr     rtp.Header
	payload []byte
}

// videoFeedback is what browsers negotiate for video (and strata's media engine offers): NACK and
// PLI; audio gets neither.
var videoFeedback = []webrtc.RTCPFeedback{{Type: webrtc.TypeRTCPFBNACK}, {Type: webrtc.TypeRTCPFBNACK, Parameter: "pli"}}

func (b *fakeBinding) CodecParameters() []webrtc.RTPCodecParameters {
	cs := []webrtc.RTPCodecParameters{
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000, RTCPFeedback: videoFeedback}, PayloadType: 96},
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, PayloadType: 111},
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP9, ClockRate: 90000, RTCPFeedback: videoFeedback}, PayloadType: 98},
		{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: "audio/telephone-event", ClockRate: 8000, SDPFmtpLine: "0-16"}, PayloadType: 126},
	}
	if b.rtx {
		cs = append(cs, webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeRTX, ClockRate: 90000, SDPFmtpLine: "apt=96"}, PayloadType: 97})
	}
	return cs
}
func (b *fakeBinding) HeaderExtensions() []webrtc.RTPHeaderExtensionParameter { return b.exts }
func (b *fakeBinding) SSRC() webrtc.SSRC                                      { return 1111 }
func (b *fakeBinding) SSRCRetransmission() webrtc.SSRC {
	if b.rtx {
		return 2222
	}
	return 0
}
func (b *fakeBinding) SSRCForwardErrorCorrection() webrtc.SSRC { return 0 }
func (b *fakeBinding) WriteStream() webrtc.TrackLocalWriter    { return b }
func (b *fakeBinding) ID() string                              { return "binding" }
func (b *fakeBinding) RTCPReader() interceptor.RTCPReader      { return nil }

func (b *fakeBinding) WriteRTP(h *rtp.Header, payload []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.count++
	if b.record {
		hc := *h
		hc.Extensions = nil
		b.packets = append(b.packets, sentPacket{hc, append([]byte(nil), payload...)})
	}
	return h.MarshalSize() + len(payload) + int(h.PaddingSize), nil
}

func (b *fakeBinding) Write(p []byte) (int, error) { return len(p), nil }

func (b *fakeBinding) sent() []sentPacket {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]sentPacket(nil), b.packets...)
}

// vp8Source produces a three-layer VP8 simulcast stream: per layer its own SSRC, sequence numbers,
// timestamps and picture ids, temporal pattern 0,2,1,2 with layer-sync bits, keyframes every
// keyEvery frames or on request. The last payload byte names the layer, so the output can be traced
// back.
type vp8Source struct {
	layers     int
	perFrame   int
	keyEvery   int
	frame      int
	seq        [3]uint16
	ts         [3]uint32
	pic        [3]uint16
	tl0        [3]uint8
	keyPending [3]bool
	body       [3]int
}

// newSimulcastTrack is a three-layer VP8 simulcast source (layers of about 54, 198 and 486 kbit/s
// at the top temporal layer) whose keyframe requests the receiver passes on, and a down-track of
// it; the source is shared with the receiver's callback under mu.
func newSimulcastTrack() (src *vp8Source, mu *sync.Mutex, recv *Receiver, d *DownTrack) {
	src, mu = newVP8Source(), &sync.Mutex{}
	src.body = [3]int{100, 400, 1000}
	recv = NewReceiver(ReceiverConfig{Codec: media.CodecVP8, Simulcast: true}, func(layer int, _ uint32) {
		mu.Lock()
		src.keyPending[layer] = true
		mu.Unlock()
	})
	d = NewDownTrack(recv, DownTrackConfig{ID: "v", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}})
	return src, mu, recv, d
}

func newVP8Source() *vp8Source {
	return &vp8Source{layers: 3, perFrame: 2, keyEvery: 90, seq: [3]uint16{100, 30000, 65000}, ts: [3]uint32{1, 1 << 31, 4e9}, pic: [3]uint16{5, 1000, 32000}, body: [3]int{100, 100, 100}}
}

// nextFrame returns the packets of the next frame of every layer.
func (s *vp8Source) nextFrame() [][][]byte {
	out := make([][][]byte, s.layers)
	for l := 0; l < s.layers; l++ {
		tid := []uint8{0, 2, 1, 2}[s.frame%4]
		key := s.frame%s.keyEvery == 0 || s.keyPending[l]
		if key {
			s.keyPending[l] = false
			tid = 0
		}
		if tid == 0 && s.frame > 0 {
			s.tl0[l]++
		}
		for k := 0; k < s.perFrame; k++ {
			out[l] = append(out[l], s.packet(l, k, tid, key))
			s.seq[l]++
		}
		s.ts[l] += 3000
		s.pic[l] = (s.pic[l] + 1) & 0x7fff
	}
	s.frame++
	return out
}

func (s *vp8Source) packet(l, k int, tid uint8, key bool) []byte {
	marker := byte(0)
	if k == s.perFrame-1 {
		marker = 0x80
	}
	seq, ts, ssrc := s.seq[l], s.ts[l], uint32(l+1)*1000
	b := []byte{0x80, marker | 96, byte(seq >> 8), byte(seq), byte(ts >> 24), byte(ts >> 16), byte(ts >> 8), byte(ts),
		byte(ssrc >> 24), byte(ssrc >> 16), byte(ssrc >> 8), byte(ssrc)}
	d0 := byte(0x80)
	if k == 0 {
		d0 |= 0x10
	}
	y := byte(0)
	if tid > 0 {
		y = 0x20
	}
	vp8 := byte(0x01)
	if key {
		vp8 = 0
	}
	b = append(b, d0, 0xE0, 0x80|byte(s.pic[l]>>8), byte(s.pic[l]), s.tl0[l], tid<<6|y)
	if k == 0 {
		b = append(b, vp8)
	}
	body := make([]byte, s.body[l])
	body[len(body)-1] = byte(l) // names the layer in the output
	return append(b, body...)
}

func layerByte(p sentPacket) int { return int(p.payload[len(p.payload)-1]) }

// outputFrame is one frame as the subscriber received it.
type outputChecker struct {
	t        *testing.T
	lastSeq  uint16
	lastPic  uint16
	lastTS   uint32
	started  bool
	layer    int
	switches int
}

// check verifies the stream a subscriber received: contiguous sequence numbers, picture ids that
// grow by one per frame, timestamps that never go back, and a keyframe at every change of source
// layer (traced by layerOf).
func (c *outputChecker) check(pkts []sentPacket, layerOf func(sentPacket) int) {
	t := c.t
	t.Helper()
	for _, p := range pkts {
		f, ok := media.ParseVP8(p.payload)
		if !ok {
			t.Fatalf("forwarded an unparsable payload")
		}
		pic, _ := f.PictureID(p.payload)
		layer := layerOf(p)
		if c.started {
			if p.hdr.SequenceNumber != c.lastSeq+1 {
				t.Fatalf("sequence gap: %d after %d", p.hdr.SequenceNumber, c.lastSeq)
			}
			if f.Start && pic != (c.lastPic+1)&0x7fff {
				t.Fatalf("picture id %d after %d", pic, c.lastPic)
			}
			if !f.Start && pic != c.lastPic {
				t.Fatalf("picture id changed inside a frame: %d after %d", pic, c.lastPic)
			}
			if int32(p.hdr.Timestamp-c.lastTS) < 0 {
				t.Fatalf("timestamp went back: %d after %d", p.hdr.Timestamp, c.lastTS)
			}
		}
		if !c.started || layer != c.layer {
			if !f.Keyframe {
				t.Fatalf("switch to layer %d without a keyframe", layer)
			}
			if c.started {
				c.switches++
			}
		}
		c.started, c.layer = true, layer
		c.lastSeq, c.lastPic, c.lastTS = p.hdr.SequenceNumber, pic, p.hdr.Timestamp
	}
}

func lay(s, t int8) Layer { return Layer{Spatial: s, Temporal: t} }
