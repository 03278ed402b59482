package videoroom_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
)

// TestSSRCSimulcast publishes the three-layer clip the way Chrome's SDP munging and janus.js do
// (one m-line, a=ssrc-group:SIM low mid high, a=ssrc-group:FID per layer, no RIDs) with an uplink
// that recovers some lost packets over RTX and repeats others over RTX (Chromium's probes). The room describes the stream as simulcast, a subscriber gets video, each substream cap
// brings that layer, and the stream stays continuous: no sequence gaps, a keyframe at every switch
// and no duplicates.
func TestSSRCSimulcast(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time media test")
	}
	c := startServer(t, nil)
	admin := attach(t, c)
	const room = 5150
	mustRequest(t, admin, map[string]any{"request": "create", "room": room, "publishers": 3}, nil)
	watcher := attach(t, c)
	mustRequest(t, watcher, map[string]any{"request": "join", "ptype": "publisher", "room": room, "display": "watcher"}, nil)

	uplink := &lossyUplink{}
	pub := startPublisherWith(t, c, room, "legacy", publisherOptions{
		client: clientOptions{innermost: []interceptor.Factory{uplink}}, offer: toSSRCSimulcast, audio: true,
	})
	announced := waitEvent(t, watcher, func(d map[string]any) bool {
		ps, _ := d["publishers"].([]any)
		return len(ps) == 1 && uint64(ps[0].(map[string]any)["id"].(float64)) == pub.id
	})
	var video, audio map[string]any
	for _, s := range announced["publishers"].([]any)[0].(map[string]any)["streams"].([]any) {
		if m := s.(map[string]any); m["type"] == "video" {
			video = m
		} else {
			audio = m
		}
	}
	if video == nil || video["simulcast"] != true || video["codec"] != "vp8" || audio == nil || audio["simulcast"] != nil {
		t.Fatalf("publishers event describes the streams as %v", announced)
	}
	waitActive(t, admin, room, pub.id) // listparticipants: a publisher

	sub := subscribeWith(t, c, room, pub.id, nil, clientOptions{noReplayProtection: true})
	var attached map[string]any
	for _, s := range sub.attached["streams"].([]any) {
		if m := s.(map[string]any); m["type"] == "video" {
			attached = m
		}
	}
	if sc, ok := attached["simulcast"].(map[string]any); !ok || sc["substream"] == nil || sc["temporal"] == nil {
		t.Fatalf("attached describes the video stream as %v", attached)
	}
	var mid string
	for _, tr := range sub.pc.GetTransceivers() {
		if tr.Kind() == webrtc.RTPCodecTypeVideo {
			mid = tr.Mid()
		}
	}
	start := time.Now()
	if d := sub.waitFrame(start.Add(-time.Minute), 10*time.Second, func(l int) bool { return l == 2 }); d < 0 {
		t.Fatalf("subscriber never got the top layer (now %d, %d packets)", sub.layerNow(), sub.count())
	}
	for _, target := range []int{0, 1, 2, 1, 0, 2} {
		mark := time.Now()
		// On a loaded machine the estimate may already have taken the subscriber down to the
		// target; strata then has no change to announce, so the event is only required for a switch.
		switched := sub.layerNow() != target
		data, _ := mustRequest(t, sub.h, map[string]any{"request": "configure", "streams": []map[string]any{{"mid": mid, "substream": target}}}, nil)
		if data["configured"] != "ok" {
			t.Fatalf("configure: %v", data)
		}
		d := sub.waitFrame(mark, 8*time.Second, func(l int) bool { return l == target })
		if d < 0 {
			t.Fatalf("substream %d: that layer never came (now %d)", target, sub.layerNow())
		}
		if switched {
			sub.waitEvent(func(e map[string]any) bool {
				return e["_at"].(time.Time).After(mark) && e["mid"] == mid && e["substream"] == float64(target)
			})
		}
		time.Sleep(time.Second)
		if l := sub.layerNow(); l != target {
			t.Fatalf("substream %d: layer %d a second after it came", target, l)
		}
		t.Logf("substream %d: first frame of the layer %v after configure", target, d.Round(time.Millisecond))
	}
	missing, bad, switches, unverifiable := sub.continuity(start)
	sub.mu.Lock()
	dups, packets := sub.dupSeqs, sub.packets
	sub.mu.Unlock()
	t.Logf("subscriber: %d packets, %d missing, %d layer changes (%d without keyframe), %d duplicates; uplink: %d packets only over RTX, %d repeated over RTX; keyframe requests q %d h %d f %d",
		packets, missing, switches, bad+unverifiable, dups, uplink.rtxOnly.Load(), uplink.repeated.Load(), pub.plis[0].Load(), pub.plis[1].Load(), pub.plis[2].Load())
	if missing != 0 { // where: the frames around each hole
		ms := sub.missingSeqs()
		t.Logf("missing %v", ms)
		for _, f := range sub.orderedFrames() {
			for _, m := range ms {
				if f.seq > m-8 && f.seq < m+8 {
					t.Logf("  frame seq %d layer %d key %v at %s", f.seq, f.layer, f.keyframe, f.at.Format("05.000"))
				}
			}
		}
	}
	if missing != 0 || bad != 0 || unverifiable != 0 {
		t.Errorf("%d sequence numbers missing, %d layer changes without a keyframe", missing, bad+unverifiable)
	}
	if switches < 6 {
		t.Errorf("%d layer changes, want at least 6", switches)
	}
	if dups != 0 {
		t.Errorf("%d packets forwarded twice", dups)
	}
	if uplink.rtxOnly.Load() == 0 || uplink.repeated.Load() == 0 {
		t.Errorf("the uplink sent nothing over RTX: the test proves nothing about RTX")
	}
}

// missingSeqs lists the sequence numbers never received.
func (s *testSubscriber) missingSeqs() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	lo, hi := int64(-1), int64(-1)
	for seq := range s.seqs {
		if lo < 0 || seq < lo {
			lo = seq
		}
		hi = max(hi, seq)
	}
	var out []int64
	for seq := lo; seq <= hi; seq++ {
		if !s.seqs[seq] {
			out = append(out, seq)
		}
	}
	return out
}

// toSSRCSimulcast rewrites a Pion offer with RID simulcast on its video m-line into SSRC simulcast
// as janus.js's munging produces it: the SIM group lowest first, an FID group per layer, a=ssrc
// lines, and no a=rid, a=simulcast or repeated a=msid.
func toSSRCSimulcast(offer string, p *testPublisher) string {
	byRID := map[string]webrtc.RTPEncodingParameters{}
	for _, e := range p.sender.GetParameters().Encodings {
		byRID[e.RID] = e
	}
	var sim []string
	block := []string{}
	for l := range p.layers {
		e := byRID[p.layers[l].rid]
		sim = append(sim, fmt.Sprint(e.SSRC))
		block = append(block, fmt.Sprintf("a=ssrc-group:FID %d %d", e.SSRC, e.RTX.SSRC))
	}
	block = append(block, "a=ssrc-group:SIM "+strings.Join(sim, " "))
	for l := range p.layers {
		e := byRID[p.layers[l].rid]
		for _, s := range []webrtc.SSRC{e.SSRC, e.RTX.SSRC} {
			block = append(block, fmt.Sprintf("a=ssrc:%d cname:publisher", s), fmt.Sprintf("a=ssrc:%d msid:publisher video", s))
		}
	}
	var out []string
	inVideo, msid := false, false
	for line := range strings.Lines(offer) {
		text := strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(text, "m=") {
			if inVideo {
				out = append(out, block...)
			}
			inVideo, msid = strings.HasPrefix(text, "m=video"), false
		}
		if inVideo {
			switch {
			case strings.HasPrefix(text, "a=rid:"), strings.HasPrefix(text, "a=simulcast:"), strings.HasPrefix(text, "a=ssrc"):
				continue
			case strings.HasPrefix(text, "a=msid:"):
				if msid {
					continue
				}
				msid = true
			}
		}
		out = append(out, text)
	}
	if inVideo {
		out = append(out, block...)
	}
	return strings.Join(out, "\r\n") + "\r\n"
}

// lossyUplink is the innermost interceptor of a publisher. Of the media packets of delta frames
// that do not end their frame, every 37th is lost and recovered at once: it reaches strata only as
// an RTX retransmission, sent after the next packet. After every 23rd media packet the one sent
// three packets before is repeated over RTX, as Chromium probes its uplink. It numbers the RTX
// stream, its own packets and the NACK responder's alike.
type lossyUplink struct {
	interceptor.NoOp
	rtxOnly, repeated atomic.Int64
}

func (u *lossyUplink) NewInterceptor(string) (interceptor.Interceptor, error) { return u, nil }

func (u *lossyUplink) BindLocalStream(info *interceptor.StreamInfo, w interceptor.RTPWriter) interceptor.RTPWriter {
	if info.SSRCRetransmission == 0 || info.PayloadTypeRetransmission == 0 {
		return w
	}
	s := &lossyStream{u: u, w: w, media: info.SSRC, rtx: info.SSRCRetransmission, rtxPT: info.PayloadTypeRetransmission, rtxSeq: 1000}
	return interceptor.RTPWriterFunc(s.write)
}

type sentPacket struct {
	h       rtp.Header
	payload []byte
}

type lossyStream struct {
	u          *lossyUplink
	w          interceptor.RTPWriter
	media, rtx uint32
	rtxPT      uint8

	mu      sync.Mutex
	n       int
	key     bool
	rtxSeq  uint16
	lost    *sentPacket    // to retransmit after the next packet
	history [3]*sentPacket // the last packets sent, for the probes
}

func (s *lossyStream) write(h *rtp.Header, payload []byte, a interceptor.Attributes) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch h.SSRC {
	case s.rtx: // the NACK responder's retransmission
		h.SequenceNumber = s.rtxSeq
		s.rtxSeq++
		return s.w.Write(h, payload, a)
	case s.media:
	default:
		return s.w.Write(h, payload, a)
	}
	if f, ok := media.ParseVP8(payload); ok && f.Start {
		s.key = f.Keyframe
	}
	s.n++
	sent := &sentPacket{h: *h, payload: append([]byte(nil), payload...)}
	if !s.key && !h.Marker && s.n%37 == 0 && s.lost == nil {
		s.u.rtxOnly.Add(1)
		s.lost = sent
		return len(payload), nil
	}
	n, err := s.w.Write(h, payload, a)
	if s.lost != nil {
		_ = s.writeRTX(s.lost, a)
		s.lost = nil
	}
	if old := s.history[s.n%len(s.history)]; old != nil && s.n%23 == 0 {
		s.u.repeated.Add(1)
		_ = s.writeRTX(old, a)
	}
	s.history[s.n%len(s.history)] = sent
	return n, err
}

// writeRTX sends a packet as an RTX retransmission (RFC 4588), without header extensions.
func (s *lossyStream) writeRTX(p *sentPacket, a interceptor.Attributes) error {
	r := rtp.Header{Version: 2, Marker: p.h.Marker, PayloadType: s.rtxPT, SequenceNumber: s.rtxSeq, Timestamp: p.h.Timestamp, SSRC: s.rtx}
	s.rtxSeq++
	_, err := s.w.Write(&r, append([]byte{byte(p.h.SequenceNumber >> 8), byte(p.h.SequenceNumber)}, p.payload...), a)
	return err
}
