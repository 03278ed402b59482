package sfu

import (
	"testing"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

type kfLog struct {
	layers []int
}

func newSimulcastRig(t *testing.T, bind *fakeBinding, respondNACK bool) (*Receiver, *DownTrack, *kfLog, *vp8Source) {
	t.Helper()
	log := &kfLog{}
	src := newVP8Source()
	recv := NewReceiver(ReceiverConfig{ID: "feed/1", Codec: media.CodecVP8, Simulcast: true}, func(layer int, _ uint32) {
		log.layers = append(log.layers, layer)
		src.keyPending[layer] = true
	})
	d := NewDownTrack(recv, DownTrackConfig{ID: "v", StreamID: "s", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, RespondNACK: respondNACK})
	if _, err := d.Bind(bind); err != nil {
		t.Fatal(err)
	}
	d.Start()
	return recv, d, log, src
}

// pump sends n frames of every layer, 33 ms apart, starting at *now.
func pump(recv *Receiver, src *vp8Source, n int, now *time.Duration) {
	for range n {
		for l, pkts := range src.nextFrame() {
			for _, p := range pkts {
				recv.WriteRTP(l, p, *now)
			}
		}
		*now += 33 * time.Millisecond
	}
}

func TestDownTrackSwitchesLayersCleanly(t *testing.T) {
	bind := &fakeBinding{record: true}
	recv, d, kf, src := newSimulcastRig(t, bind, false)
	now := time.Second
	pump(recv, src, 10, &now)
	if cur := d.Current(); cur != (lay(2, 2)) {
		t.Fatalf("current %v after start, want the top layer", cur)
	}
	startSwitches := d.Stats().Switches
	// Down to s0t1: the old layer keeps flowing until s0's keyframe (requested) arrives.
	d.SetTarget(lay(0, 1))
	pump(recv, src, 1, &now)
	if len(kf.layers) == 0 || kf.layers[len(kf.layers)-1] != 0 {
		t.Fatalf("no keyframe requested on layer 0: %v", kf.layers)
	}
	pump(recv, src, 20, &now)
	if cur := d.Current(); cur != (lay(0, 1)) {
		t.Fatalf("current %v, want s0t1", cur)
	}
	// Each target is reached; on the way the old layer may change its temporal layer while it
	// waits for the new one's keyframe.
	for _, target := range []Layer{lay(1, 2), lay(1, 0), lay(2, 2)} {
		d.SetTarget(target)
		pump(recv, src, 20, &now)
		if cur := d.Current(); cur != target {
			t.Fatalf("current %v, want %v", cur, target)
		}
	}
	c := &outputChecker{t: t}
	c.check(bind.sent(), layerByte)
	if c.switches < 3 {
		t.Fatalf("%d source switches, want at least 3", c.switches)
	}
	if n := d.Stats().Switches - startSwitches; n < 4 {
		t.Fatalf("%d layer changes after the start, want at least 4", n)
	}
	for _, p := range bind.sent() {
		if p.hdr.SSRC != 1111 || p.hdr.PayloadType != 96 {
			t.Fatalf("ssrc %d pt %d", p.hdr.SSRC, p.hdr.PayloadType)
		}
	}
	if st := d.Stats(); st.Dropped == 0 || st.Current != (lay(2, 2)) || st.Target != (lay(2, 2)) {
		t.Fatalf("stats %+v", st)
	}
}

func TestTemporalLayersFollowTheTarget(t *testing.T) {
	bind := &fakeBinding{record: true}
	recv, d, _, src := newSimulcastRig(t, bind, false)
	d.SetTarget(lay(2, 0))
	now := time.Second
	pump(recv, src, 40, &now)
	for _, p := range bind.sent() {
		if f, _ := media.ParseVP8(p.payload); f.TID > 0 {
			t.Fatalf("temporal layer %d forwarded at target t0", f.TID)
		}
	}
	before := len(bind.sent())
	d.SetTarget(lay(2, 2))
	pump(recv, src, 40, &now)
	if got := len(bind.sent()) - before; got < 70 {
		t.Fatalf("%d packets after raising the temporal target, want ~80", got)
	}
	c := &outputChecker{t: t}
	c.check(bind.sent(), layerByte)
}

func TestKeyframeRequestsAreRateLimited(t *testing.T) {
	var at []time.Duration
	now := time.Duration(0)
	recv := NewReceiver(ReceiverConfig{Codec: media.CodecVP8, Simulcast: true}, func(int, uint32) { at = append(at, now) })
	recv.SetRTT(200 * time.Millisecond) // gap = max(2 × 200 ms, 300 ms) = 400 ms
	for now = 0; now < 2*time.Second; now += 10 * time.Millisecond {
		recv.RequestKeyframe(1, now)
	}
	if len(at) != 5 {
		t.Fatalf("%d requests in 2 s, want 5 (every 400 ms): %v", len(at), at)
	}
	// A keyframe resets the limiter.
	src := newVP8Source()
	src.keyEvery = 1
	recv.WriteRTP(1, src.nextFrame()[1][0], now)
	if !recv.RequestKeyframe(1, now+time.Millisecond) {
		t.Fatal("request after a keyframe was held back")
	}
}

func TestSubscriberPLIReachesThePublisher(t *testing.T) {
	bind := &fakeBinding{}
	recv, d, kf, src := newSimulcastRig(t, bind, false)
	now := time.Second
	pump(recv, src, 5, &now)
	n := len(kf.layers)
	d.HandleRTCP(rtcpOf(t, &rtcp.PictureLossIndication{MediaSSRC: 1111}), now)
	d.HandleRTCP(rtcpOf(t, &rtcp.FullIntraRequest{MediaSSRC: 1111, FIR: []rtcp.FIREntry{{SSRC: 1111}}}), now+time.Millisecond)
	if len(kf.layers) != n+1 || kf.layers[n] != 2 {
		t.Fatalf("keyframe requests %v: want one more, for layer 2", kf.layers)
	}
	if st := d.Stats(); st.KeyframeRequests != 2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestNACKsAreAnsweredFromTheCacheOverRTX(t *testing.T) {
	bind := &fakeBinding{record: true, rtx: true}
	recv, d, _, src := newSimulcastRig(t, bind, true)
	now := time.Second
	pump(recv, src, 10, &now)
	sent := bind.sent()
	lost := sent[5]
	d.HandleRTCP(rtcpOf(t, &rtcp.TransportLayerNack{MediaSSRC: 1111, Nacks: rtcp.NackPairsFromSequenceNumbers([]uint16{lost.hdr.SequenceNumber})}), now)
	all := bind.sent()
	if len(all) != len(sent)+1 {
		t.Fatalf("%d packets after the NACK, want one more", len(all)-len(sent))
	}
	rtx := all[len(all)-1]
	if rtx.hdr.SSRC != 2222 || rtx.hdr.PayloadType != 97 {
		t.Fatalf("retransmission on ssrc %d pt %d, want RTX", rtx.hdr.SSRC, rtx.hdr.PayloadType)
	}
	osn := uint16(rtx.payload[0])<<8 | uint16(rtx.payload[1])
	if osn != lost.hdr.SequenceNumber || string(rtx.payload[2:]) != string(lost.payload) {
		t.Fatalf("RTX payload differs from the original (osn %d, want %d)", osn, lost.hdr.SequenceNumber)
	}
	if st := d.Stats(); st.NACKed != 1 || st.Retransmitted != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestPausedDownTrackResumesContinuously(t *testing.T) {
	bind := &fakeBinding{record: true}
	recv, d, _, src := newSimulcastRig(t, bind, false)
	d.SetTarget(lay(1, 2))
	now := time.Second
	pump(recv, src, 10, &now)
	d.SetPaused(true)
	pump(recv, src, 10, &now)
	n := len(bind.sent())
	d.SetPaused(false)
	pump(recv, src, 10, &now)
	if len(bind.sent()) == n {
		t.Fatal("nothing forwarded after resuming")
	}
	c := &outputChecker{t: t}
	c.check(bind.sent(), layerByte)
}

func TestStaleLayerFallsBack(t *testing.T) {
	bind := &fakeBinding{record: true}
	recv, d, _, src := newSimulcastRig(t, bind, false)
	now := time.Second
	pump(recv, src, 10, &now)
	src.layers = 2 // the publisher stops its top layer
	pump(recv, src, 40, &now)
	if cur := d.Current(); cur.Spatial != 1 {
		t.Fatalf("current %v after the top layer stopped, want layer 1", cur)
	}
	c := &outputChecker{t: t}
	c.check(bind.sent(), layerByte)
}

func TestReceiverCountsMalformedPackets(t *testing.T) {
	recv := NewReceiver(ReceiverConfig{Codec: media.CodecVP8, Simulcast: true}, nil)
	recv.WriteRTP(0, []byte{1, 2, 3}, 0)
	recv.WriteRTP(0, []byte{0x80, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0x80}, 0) // X set, no byte after
	recv.WriteRTP(7, []byte{0x80, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0x10, 0}, 0)
	st := recv.Stats()
	if st.MalformedRTP != 1 || st.MalformedPayload != 1 || st.Packets != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestRatesPerLayer(t *testing.T) {
	recv := NewReceiver(ReceiverConfig{Codec: media.CodecVP8, Simulcast: true}, nil)
	src := newVP8Source()
	now := time.Duration(0)
	pump(recv, src, 60, &now) // 2 s at 30 fps
	r := recv.Rates(now)
	// Every layer sends 2 packets of ~120 bytes per frame at 30 fps ≈ 58 kbit/s; t0 is 1/4 of the
	// frames, t1 half.
	for s := 0; s < 3; s++ {
		full := r[s][2]
		if full < 45000 || full > 70000 {
			t.Fatalf("layer %d rate %v", s, full)
		}
		if r[s][0] > full/3 || r[s][1] > full*2/3 || r[s][0] >= r[s][1] {
			t.Fatalf("layer %d temporal rates %v", s, r[s])
		}
	}
	_ = policy.TopLayer
}

func TestSwitchingSourceKeepsOneStream(t *testing.T) {
	bind := &fakeBinding{record: true}
	recvA, d, _, srcA := newSimulcastRig(t, bind, false)
	srcB := newVP8Source()
	srcB.keyEvery = 1000
	recvB := NewReceiver(ReceiverConfig{Codec: media.CodecVP8, Simulcast: true}, func(layer int, _ uint32) { srcB.keyPending[layer] = true })
	now := time.Second
	both := func(n int) {
		for range n {
			for l, pkts := range srcA.nextFrame() {
				for _, p := range pkts {
					recvA.WriteRTP(l, p, now)
				}
			}
			for l, pkts := range srcB.nextFrame() {
				for _, p := range pkts {
					p[len(p)-1] = byte(10 + l) // B's layers are 10, 11, 12 in the output
					recvB.WriteRTP(l, p, now)
				}
			}
			now += 33 * time.Millisecond
		}
	}
	both(10)
	if err := d.SetReceiver(recvB); err != nil {
		t.Fatal(err)
	}
	both(10)
	sent := bind.sent()
	if last := layerByte(sent[len(sent)-1]); last != 12 {
		t.Fatalf("still forwarding layer %d after the switch", last)
	}
	c := &outputChecker{t: t}
	c.check(sent, layerByte)
	if len(recvA.Sinks()) != 0 || len(recvB.Sinks()) != 1 {
		t.Fatal("down-track not moved between receivers")
	}
}

// countingSink counts what a receiver delivers to it.
type countingSink struct{ packets, resyncs int }

func (c *countingSink) WriteRTP(*Packet) { c.packets++ }
func (c *countingSink) Resync()          { c.resyncs++ }

// TestMutedReceiverFeedsNoSink: muting stops every sink (subscribers, forwarders, recorders), as
// Janus stops relaying, forwarding and recording a muted stream; unmuting resyncs them all and asks
// for a keyframe.
func TestMutedReceiverFeedsNoSink(t *testing.T) {
	bind := &fakeBinding{record: true}
	recv, _, kf, src := newSimulcastRig(t, bind, false)
	sink := &countingSink{}
	recv.AddSink(sink)
	now := time.Second
	pump(recv, src, 5, &now)
	recv.SetMuted(true)
	n := len(bind.sent())
	pump(recv, src, 5, &now)
	if len(bind.sent()) != n {
		t.Fatal("forwarded while muted")
	}
	requests := len(kf.layers)
	recv.SetMuted(false)
	if len(kf.layers) == requests {
		t.Fatal("no keyframe requested on unmute")
	}
	if sink.resyncs != 1 {
		t.Fatalf("%d resyncs on unmute, want 1", sink.resyncs)
	}
	pump(recv, src, 5, &now)
	c := &outputChecker{t: t}
	c.check(bind.sent(), layerByte)
	if sink.packets != 10*3*2 {
		t.Fatalf("sink saw %d packets, want the 60 not muted", sink.packets)
	}
	recv.RemoveSink(sink)
	pump(recv, src, 1, &now)
	if sink.packets != 60 {
		t.Fatal("removed sink still fed")
	}
}
