package videoroom_test

import (
	"encoding/json"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/media"
)

// testPublisher sends the test clip as three-layer VP8 simulcast (rids f, h, q) at 30 fps and
// answers keyframe requests at once by restarting the current group of pictures.
type testPublisher struct {
	t      testing.TB
	h      *janusclient.Handle
	pc     *webrtc.PeerConnection
	id     uint64
	pvt    uint64
	layers []testLayer
	tracks [3]*webrtc.TrackLocalStaticRTP
	sender *webrtc.RTPSender
	kfReq  [3]atomic.Bool
	plis   [3]atomic.Int64
	done   chan struct{}
	wg     sync.WaitGroup
}

func startPublisher(t testing.TB, c *janusclient.Client, room uint64, display string) *testPublisher {
	t.Helper()
	return startPublisherWith(t, c, room, display, publisherOptions{})
}

// publisherOptions adjust startPublisherWith.
type publisherOptions struct {
	client clientOptions
	// offer, when set, rewrites the offer strata receives (the publisher's own description stays
	// Pion's), e.g. into SSRC simulcast.
	offer func(sdp string, p *testPublisher) string
	// audio adds an audio m-line that sends nothing.
	audio bool
}

func startPublisherWith(t testing.TB, c *janusclient.Client, room uint64, display string, o publisherOptions) *testPublisher {
	t.Helper()
	p := &testPublisher{t: t, h: attach(t, c), layers: testMedia(t), done: make(chan struct{})}
	for l := range p.layers {
		for i := 0; i < len(p.layers[l].frames); i += clipGOP {
			if !p.layers[l].keyAt[i] {
				t.Fatalf("test clip: frame %d of layer %d is not a keyframe", i, l)
			}
		}
	}
	joined, _ := mustRequest(t, p.h, map[string]any{"request": "join", "ptype": "publisher", "room": room, "display": display}, nil)
	p.id, p.pvt = uint64(joined["id"].(float64)), uint64(joined["private_id"].(float64))
	pc, err := clientAPIWith(t, nil, o.client).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	p.pc = pc
	vp8 := webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}
	var sender *webrtc.RTPSender
	for l := 2; l >= 0; l-- { // highest first, as browsers list them
		tr, err := webrtc.NewTrackLocalStaticRTP(vp8, "video", "publisher", webrtc.WithRTPStreamID(p.layers[l].rid))
		if err != nil {
			t.Fatal(err)
		}
		p.tracks[l] = tr
		if sender == nil {
			if sender, err = pc.AddTrack(tr); err != nil {
				t.Fatal(err)
			}
		} else if err := sender.AddEncoding(tr); err != nil {
			t.Fatal(err)
		}
	}
	p.sender = sender
	for l := range p.layers {
		go p.readFeedback(sender, l)
	}
	if o.audio {
		opus := webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}
		tr, err := webrtc.NewTrackLocalStaticRTP(opus, "audio", "publisher")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pc.AddTrack(tr); err != nil {
			t.Fatal(err)
		}
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	jsep := completeLocal(t, pc, offer)
	if o.offer != nil {
		jsep.SDP = o.offer(jsep.SDP, p)
	}
	data, answer := mustRequest(t, p.h, map[string]any{"request": "publish"}, jsep)
	if data["configured"] != "ok" || answer == nil {
		t.Fatalf("publish: %v", data)
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		t.Fatal(err)
	}
	p.wg.Add(1)
	go p.send()
	t.Cleanup(p.stop)
	return p
}

func (p *testPublisher) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	close(p.done)
	p.wg.Wait()
	_ = p.pc.Close()
}

func (p *testPublisher) readFeedback(sender *webrtc.RTPSender, layer int) {
	rid := p.layers[layer].rid
	for {
		pkts, _, err := sender.ReadSimulcastRTCP(rid)
		if err != nil {
			return
		}
		for _, pkt := range pkts {
			switch pkt.(type) {
			case *rtcp.PictureLossIndication, *rtcp.FullIntraRequest:
				p.kfReq[layer].Store(true)
				p.plis[layer].Add(1)
			}
		}
	}
}

// send plays the clip in a loop on every layer.
func (p *testPublisher) send() {
	defer p.wg.Done()
	var idx [3]int
	var seq [3]uint16
	ts := [3]uint32{1000, 2_000_000_000, 4_000_000_000}
	pk := [3]vp8Packetizer{{pic: 100}, {pic: 9000}, {pic: 30000}}
	midID, ridID, mid := p.simulcastExtensions()
	tick := time.NewTicker(time.Second / clipFPS)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-tick.C:
		}
		for l := range p.layers {
			frames := p.layers[l].frames
			if p.kfReq[l].Swap(false) {
				idx[l] -= idx[l] % clipGOP // restart this group of pictures: a keyframe now
			}
			i := idx[l]
			payloads := pk[l].payloads(frames[i], clipTID(i), i%clipPattern == 1 || i%clipPattern == 2)
			for k, pl := range payloads {
				pkt := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: seq[l], Timestamp: ts[l], Marker: k == len(payloads)-1}, Payload: pl}
				seq[l]++
				// A browser marks simulcast packets with mid and rid; Pion leaves that to the application.
				_ = pkt.SetExtension(midID, []byte(mid))
				_ = pkt.SetExtension(ridID, []byte(p.layers[l].rid))
				_ = p.tracks[l].WriteRTP(pkt)
			}
			ts[l] += 90000 / clipFPS
			idx[l] = (i + 1) % len(frames)
		}
	}
}

// simulcastExtensions returns the negotiated mid and rid extension ids and the video mid.
func (p *testPublisher) simulcastExtensions() (midID, ridID uint8, mid string) {
	for _, e := range p.sender.GetParameters().HeaderExtensions {
		switch e.URI {
		case sdp.SDESMidURI:
			midID = uint8(e.ID)
		case sdp.SDESRTPStreamIDURI:
			ridID = uint8(e.ID)
		}
	}
	for _, t := range p.pc.GetTransceivers() {
		if t.Sender() == p.sender {
			mid = t.Mid()
		}
	}
	return midID, ridID, mid
}

// rxFrame is the start of a frame as a subscriber received it.
type rxFrame struct {
	ts       int64 // unwrapped RTP timestamp
	seq      int64 // unwrapped sequence number of the frame's first packet
	layer    int   // -1 when the payload matches no layer of the clip
	keyframe bool
	tid      int8
	at       time.Time
	// live: newer than every frame start before it (not a late retransmission of an old frame)
	live bool
}

// testSubscriber receives one publisher's video and records every frame start and sequence
// number, so tests can check continuity and which layer arrived when.
type testSubscriber struct {
	t      testing.TB
	h      *janusclient.Handle
	pc     *webrtc.PeerConnection
	layers []testLayer
	prefix map[string]int

	attached map[string]any // the join's answer

	mu       sync.Mutex
	frames   []rxFrame
	seqs     map[int64]bool
	dupSeqs  int // sequence numbers received twice, not counting retransmissions over RTX
	lastSeq  int64
	lastTS   int64
	newestFr int64
	started  bool
	packets  int
	bytes    int
	events   []map[string]any
}

const prefixLen = 48

func subscribe(t testing.TB, c *janusclient.Client, room, feed uint64, shaper *linkShaper) *testSubscriber {
	t.Helper()
	return subscribeWith(t, c, room, feed, shaper, clientOptions{})
}

func subscribeWith(t testing.TB, c *janusclient.Client, room, feed uint64, shaper *linkShaper, o clientOptions) *testSubscriber {
	t.Helper()
	s := &testSubscriber{t: t, h: attach(t, c), layers: testMedia(t), seqs: map[int64]bool{}, prefix: map[string]int{}}
	for l, layer := range s.layers {
		for _, f := range layer.frames {
			s.prefix[string(f[:min(prefixLen, len(f))])] = l
		}
	}
	data, offer := mustRequest(t, s.h, map[string]any{"request": "join", "ptype": "subscriber", "room": room, "streams": []map[string]any{{"feed": feed}}}, nil)
	if data["videoroom"] != "attached" || offer == nil {
		t.Fatalf("subscribe: %v", data)
	}
	s.attached = data
	pc, err := clientAPIWith(t, shaper, o).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	s.pc = pc
	t.Cleanup(func() { _ = pc.Close() })
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			pkt, attr, err := tr.ReadRTP()
			if err != nil {
				return
			}
			s.recordRTP(pkt, time.Now(), attr.Get(webrtc.AttributeRtxSsrc) != nil)
		}
	})
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		t.Fatal(err)
	}
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if started, _ := mustRequest(t, s.h, map[string]any{"request": "start"}, completeLocal(t, pc, answer)); started["started"] != "ok" {
		t.Fatalf("start: %v", started)
	}
	go s.collectEvents()
	return s
}

// answer applies a renegotiation offer and sends the answer with start.
func (s *testSubscriber) answer(offer *janusclient.JSEP) {
	s.t.Helper()
	if err := s.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		s.t.Fatal(err)
	}
	answer, err := s.pc.CreateAnswer(nil)
	if err != nil {
		s.t.Fatal(err)
	}
	if started, _ := mustRequest(s.t, s.h, map[string]any{"request": "start"}, completeLocal(s.t, s.pc, answer)); started["started"] != "ok" {
		s.t.Fatalf("start: %v", started)
	}
}

func (s *testSubscriber) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.packets
}

func (s *testSubscriber) collectEvents() {
	for ev := range s.h.Events() {
		if ev.PluginData == nil {
			continue
		}
		var d map[string]any
		if json.Unmarshal(ev.PluginData.Data, &d) == nil {
			d["_at"] = time.Now()
			if ev.JSEP != nil {
				d["_jsep"] = ev.JSEP
			}
			s.mu.Lock()
			s.events = append(s.events, d)
			s.mu.Unlock()
		}
	}
}

func unwrap(last int64, v uint32, bits uint) int64 {
	mod := int64(1) << bits
	if last < 0 {
		return int64(v)
	}
	d := (int64(v) - last%mod + mod) % mod
	if d >= mod/2 {
		d -= mod
	}
	return last + d
}

// recordRTP notes a packet; repaired says it came as a retransmission over RTX.
func (s *testSubscriber) recordRTP(pkt *rtp.Packet, at time.Time, repaired bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.started, s.lastSeq, s.lastTS, s.newestFr = true, -1, -1, -1
	}
	seq := unwrap(s.lastSeq, uint32(pkt.SequenceNumber), 16)
	s.lastSeq = max(s.lastSeq, seq)
	ts := unwrap(s.lastTS, pkt.Timestamp, 32)
	s.lastTS = max(s.lastTS, ts)
	if s.seqs[seq] && !repaired {
		s.dupSeqs++
	}
	s.seqs[seq] = true
	s.packets++
	s.bytes += pkt.MarshalSize()
	f, ok := media.ParseVP8(pkt.Payload)
	if !ok || !f.Start {
		return
	}
	hdr := 6 // the descriptor the test publisher writes (and strata keeps): X, I+L+T, 2-byte picture id, TL0PICIDX, TID
	if len(pkt.Payload) < hdr+1 {
		return
	}
	body := pkt.Payload[hdr:]
	layer, known := s.prefix[string(body[:min(prefixLen, len(body))])]
	if !known {
		layer = -1
	}
	live := ts > s.newestFr
	s.newestFr = max(s.newestFr, ts)
	s.frames = append(s.frames, rxFrame{ts: ts, seq: seq, layer: layer, keyframe: f.Keyframe, tid: f.TID, at: at, live: live})
}

// orderedFrames returns the frame starts in timestamp order, without duplicates (retransmissions).
func (s *testSubscriber) orderedFrames() []rxFrame {
	s.mu.Lock()
	frames := append([]rxFrame(nil), s.frames...)
	s.mu.Unlock()
	sort.SliceStable(frames, func(i, j int) bool { return frames[i].ts < frames[j].ts })
	out := frames[:0]
	for i, f := range frames {
		if i == 0 || f.ts != out[len(out)-1].ts {
			out = append(out, f)
		}
	}
	return out
}

// layerNow is the layer of the newest frame received (-1 before any).
func (s *testSubscriber) layerNow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.frames) - 1; i >= 0; i-- {
		if s.frames[i].layer >= 0 && s.frames[i].live {
			return s.frames[i].layer
		}
	}
	return -1
}

// excursions are the stretches of [from, to] the subscriber spent on layers other than layer:
// how many, their total and the longest (one still under way at to ends there); n is the frames
// in the window.
func (s *testSubscriber) excursions(from, to time.Time, layer int) (count int, total, longest time.Duration, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var away time.Time
	end := func(at time.Time) {
		total += at.Sub(away)
		longest = max(longest, at.Sub(away))
		away = time.Time{}
	}
	for _, f := range s.frames {
		if !f.live || f.layer < 0 || f.at.Before(from) || f.at.After(to) {
			continue
		}
		n++
		switch {
		case f.layer != layer && away.IsZero():
			away = f.at
			count++
		case f.layer == layer && !away.IsZero():
			end(f.at)
		}
	}
	if !away.IsZero() {
		end(to)
	}
	return count, total, longest, n
}

// waitFrame waits for the first frame arriving after since whose layer satisfies ok; it returns
// when it arrived (relative to since) or -1.
func (s *testSubscriber) waitFrame(since time.Time, within time.Duration, ok func(layer int) bool) time.Duration {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		for _, f := range s.frames {
			if f.at.After(since) && f.live && f.layer >= 0 && ok(f.layer) {
				s.mu.Unlock()
				return f.at.Sub(since)
			}
		}
		s.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	return -1
}

// continuity reports sequence numbers never received, frames whose layer changed without a
// keyframe, and the number of layer changes, over frames that arrived after from. A layer change
// can only be judged when every packet since the previous frame arrived: when the path lost the
// keyframe itself (the receiver would ask for another), the change is counted as unverifiable.
func (s *testSubscriber) continuity(after time.Time) (missing int, badSwitches, switches, unverifiable int) {
	s.mu.Lock()
	lo, hi := int64(-1), int64(-1)
	for seq := range s.seqs {
		if lo < 0 || seq < lo {
			lo = seq
		}
		hi = max(hi, seq)
	}
	for seq := lo; seq <= hi; seq++ {
		if !s.seqs[seq] {
			missing++
		}
	}
	s.mu.Unlock()
	last, lastSeq := -1, int64(0)
	frames := s.orderedFrames()
	for i, f := range frames {
		if f.layer < 0 {
			continue
		}
		if last >= 0 && f.layer != last && f.at.After(after) {
			switches++
			if !f.keyframe && !s.allReceived(lastSeq, f.seq) {
				unverifiable++
			} else if !f.keyframe {
				badSwitches++
				for k := max(0, i-3); k < min(len(frames), i+3); k++ {
					s.t.Logf("  frame ts %d layer %d key %v tid %d live %v at %s", frames[k].ts, frames[k].layer, frames[k].keyframe, frames[k].tid, frames[k].live, frames[k].at.Format("05.000"))
				}
			}
		}
		last, lastSeq = f.layer, f.seq
	}
	return missing, badSwitches, switches, unverifiable
}

func (s *testSubscriber) allReceived(from, to int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for seq := from; seq <= to; seq++ {
		if !s.seqs[seq] {
			return false
		}
	}
	return true
}

// waitEvent waits for a plugin event the subscriber handle received that satisfies ok.
func (s *testSubscriber) waitEvent(ok func(map[string]any) bool) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		for _, e := range s.events {
			if ok(e) {
				s.mu.Unlock()
				return e
			}
		}
		s.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatal("expected event did not arrive")
	return nil
}

func (s *testSubscriber) layerEvents() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, e := range s.events {
		if _, ok := e["substream"]; ok {
			out = append(out, e)
		}
	}
	return out
}
