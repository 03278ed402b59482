package sfu

import (
	"sync"
	"testing"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/media/mediatest"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// markLog is a Marker that remembers every mark.
type markLog struct {
	mu    sync.Mutex
	marks map[[2]uint32]uint8
}

func (m *markLog) Mark(ssrc uint32, seq uint16, dscp uint8) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.marks == nil {
		m.marks = map[[2]uint32]uint8{}
	}
	m.marks[[2]uint32{ssrc, uint32(seq)}] = dscp
}

func (m *markLog) of(p sentPacket) (uint8, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.marks[[2]uint32{p.hdr.SSRC, uint32(p.hdr.SequenceNumber)}]
	return d, ok
}

var layerDSCP = []uint8{34, 36, 38}

// temporalRig is one VP8 stream with three temporal layers (no simulcast), the stream of the live
// experiments, forwarded by a down-track with marks.
func temporalRig(t *testing.T, bind *fakeBinding) (*Receiver, *DownTrack, *vp8Source, *markLog) {
	t.Helper()
	src := newVP8Source()
	src.layers = 1
	recv := NewReceiver(ReceiverConfig{Codec: media.CodecVP8}, func(int, uint32) { src.keyPending[0] = true })
	marks := &markLog{}
	d := NewDownTrack(recv, DownTrackConfig{ID: "v", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000},
		RespondNACK: true, Marker: marks})
	if _, err := d.Bind(bind); err != nil {
		t.Fatal(err)
	}
	m, ok := MarkLadder(recv, []Layer{lay(0, 0), lay(0, 1), lay(0, 2)}, layerDSCP)
	if !ok {
		t.Fatal("a temporal ladder of three rungs with three marks is not markable")
	}
	d.SetMarks(m)
	d.Start()
	return recv, d, src, marks
}

// tids counts the forwarded packets per temporal layer and checks each one's mark.
func tids(t *testing.T, pkts []sentPacket, marks *markLog) [3]int {
	t.Helper()
	var n [3]int
	for _, p := range pkts {
		f, _ := media.ParseVP8(p.payload)
		n[f.TID]++
		if d, ok := marks.of(p); !ok || d != layerDSCP[f.TID] {
			t.Fatalf("seq %d of temporal layer %d marked %d (%v), want %d", p.hdr.SequenceNumber, f.TID, d, ok, layerDSCP[f.TID])
		}
	}
	return n
}

func TestEnforcedDownTrackForwardsEveryTemporalLayerMarked(t *testing.T) {
	bind := &fakeBinding{record: true}
	recv, d, src, marks := temporalRig(t, bind)
	d.SetTarget(lay(0, 0)) // the controller's decision: one rung
	now := time.Second
	pump(recv, src, 40, &now)
	if n := tids(t, bind.sent(), marks); n[0] == 0 || n[1]+n[2] != 0 {
		t.Fatalf("not enforced: forwarded %v packets per temporal layer, want the base only", n)
	}

	// A switch enforces the decision: every layer goes out, marked, and the switch drops.
	d.SetEnforced(true, policy.TopLayer)
	before := len(bind.sent())
	pump(recv, src, 40, &now)
	after := bind.sent()[before:]
	if n := tids(t, after, marks); n[1] == 0 || n[2] == 0 || n[0] == 0 {
		t.Fatalf("enforced: forwarded %v packets per temporal layer, want all three", n)
	}
	if !d.Enforced() || d.CanPad() {
		t.Fatalf("enforced %v, can pad %v: want enforced and no padding", d.Enforced(), d.CanPad())
	}
	(&outputChecker{t: t}).check(bind.sent(), layerByte)

	// A subscriber's own cap still holds while enforced.
	d.SetEnforced(true, lay(2, 1))
	before = len(bind.sent())
	pump(recv, src, 40, &now)
	if n := tids(t, bind.sent()[before+2:], marks); n[2] != 0 || n[1] == 0 {
		t.Fatalf("enforced with the subscriber's cap t1: %v per temporal layer", n)
	}

	// No longer enforced: the SFU thins to the target again, from the next frame on.
	d.SetEnforced(false, policy.TopLayer)
	before = len(bind.sent())
	pump(recv, src, 40, &now)
	if n := tids(t, bind.sent()[before+2:], marks); n[1]+n[2] != 0 {
		t.Fatalf("enforcement ended: %v per temporal layer, want the base only", n)
	}
	(&outputChecker{t: t}).check(bind.sent(), layerByte)
}

// While a switch drops the upper layers, the subscriber NACKs their packets: they are not sent
// again (the switch would drop them again), the others are, with their mark.
func TestEnforcedDownTrackResendsOnlyWhatTheSwitchPasses(t *testing.T) {
	bind := &fakeBinding{record: true, rtx: true}
	recv, d, src, marks := temporalRig(t, bind)
	d.SetTarget(lay(0, 0))
	d.SetEnforced(true, policy.TopLayer)
	now := time.Second
	pump(recv, src, 20, &now)
	var base, top sentPacket
	for _, p := range bind.sent() {
		switch f, _ := media.ParseVP8(p.payload); f.TID {
		case 0:
			base = p
		case 2:
			top = p
		}
	}
	nack := func(p sentPacket) {
		d.HandleRTCP(rtcpOf(t, &rtcp.TransportLayerNack{MediaSSRC: 1111,
			Nacks: rtcp.NackPairsFromSequenceNumbers([]uint16{p.hdr.SequenceNumber})}), now)
	}
	n := len(bind.sent())
	nack(top)
	if len(bind.sent()) != n {
		t.Fatal("a packet of a layer the switch drops was retransmitted")
	}
	nack(base)
	all := bind.sent()
	if len(all) != n+1 || all[n].hdr.SSRC != 2222 {
		t.Fatalf("base-layer NACK: %d packets sent, want one RTX", len(all)-n)
	}
	if m, ok := marks.of(all[n]); !ok || m != layerDSCP[0] {
		t.Fatalf("retransmission marked %d (%v), want %d", m, ok, layerDSCP[0])
	}
}

// An SVC stream whose ladder adds one spatial layer per rung: enforced, every spatial layer goes
// out, each marked with its rung's DSCP, the publisher's marker bit on the top layer.
func TestEnforcedSVCForwardsEverySpatialLayerMarked(t *testing.T) {
	bind := &fakeBinding{record: true}
	recv := NewReceiver(ReceiverConfig{Codec: media.CodecVP9}, func(int, uint32) {})
	marks := &markLog{}
	d := NewDownTrack(recv, DownTrackConfig{ID: "v", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP9, ClockRate: 90000}, Marker: marks})
	if _, err := d.Bind(bind); err != nil {
		t.Fatal(err)
	}
	m, ok := MarkLadder(recv, []Layer{lay(0, 2), lay(1, 2), lay(2, 2)}, layerDSCP)
	if !ok {
		t.Fatal("a nested SVC ladder is not markable")
	}
	d.SetMarks(m)
	d.Start()
	d.SetTarget(lay(0, 2))
	seq, ts, tl0 := uint16(10), uint32(0), uint8(0)
	pic, keyAt := uint16(0), uint16(0)
	send := func(n int) {
		for range n {
			tid := []uint8{0, 2, 1, 2}[pic%4]
			if pic == keyAt {
				tid = 0
			}
			if tid == 0 && pic > 0 {
				tl0++
			}
			for _, p := range mediatest.VP9Picture(&seq, ts, pic, tl0, tid, pic == keyAt) {
				recv.WriteRTP(0, p, time.Duration(pic)*33*time.Millisecond)
			}
			ts += 3000
			pic++
		}
	}
	sids := func(pkts []sentPacket) [3]int {
		var n [3]int
		for _, p := range pkts {
			f, _ := media.ParseVP9(p.payload)
			n[f.SID]++
			if got, ok := marks.of(p); !ok || got != layerDSCP[f.SID] {
				t.Fatalf("spatial layer %d marked %d (%v), want %d", f.SID, got, ok, layerDSCP[f.SID])
			}
			if p.hdr.Marker != (f.SID == 2) && d.Enforced() {
				t.Fatalf("enforced: marker %v on spatial layer %d", p.hdr.Marker, f.SID)
			}
		}
		return n
	}
	send(12)
	if n := sids(bind.sent()); n[0] != 12 || n[1]+n[2] != 0 {
		t.Fatalf("not enforced: %v packets per spatial layer, want the base only", n)
	}
	d.SetEnforced(true, policy.TopLayer)
	before := len(bind.sent())
	keyAt = pic // k-SVC: the upper spatial layers join at a keyframe
	send(12)
	if n := sids(bind.sent()[before:]); n[1] == 0 || n[2] == 0 {
		t.Fatalf("enforced: %v packets per spatial layer, want all three", n)
	}
}

func TestMarkLadder(t *testing.T) {
	vp8 := NewReceiver(ReceiverConfig{Codec: media.CodecVP8, Simulcast: true}, nil)
	vp9 := NewReceiver(ReceiverConfig{Codec: media.CodecVP9}, nil)
	// Simulcast: each encoding's temporal layers take the marks of its own rungs.
	m, ok := MarkLadder(vp8, []Layer{lay(0, 0), lay(0, 2), lay(1, 0), lay(1, 1)}, []uint8{10, 12, 14, 16})
	want := LayerMarks{{10, 12, 12}, {14, 16, 0}}
	if !ok || m != want {
		t.Fatalf("simulcast marks %v (%v), want %v", m, ok, want)
	}
	// SVC: a packet carries the mark of the first rung that forwards it.
	m, ok = MarkLadder(vp9, []Layer{lay(0, 0), lay(0, 1), lay(1, 1)}, layerDSCP)
	want = LayerMarks{{34, 36, 0}, {38, 38, 0}}
	if !ok || m != want {
		t.Fatalf("svc marks %v (%v), want %v", m, ok, want)
	}
	for _, tc := range []struct {
		name   string
		r      *Receiver
		ladder []Layer
	}{
		{"more rungs than marks", vp8, []Layer{lay(0, 0), lay(0, 1), lay(0, 2), lay(1, 0)}},
		{"svc rungs not nested", vp9, []Layer{lay(0, 0), lay(0, 2), lay(1, 0)}},
		{"no ladder", vp8, nil},
	} {
		if m, ok := MarkLadder(tc.r, tc.ladder, layerDSCP); ok || m != (LayerMarks{}) {
			t.Errorf("%s: marks %v, ok %v; want none", tc.name, m, ok)
		}
	}
	if u := UniformMarks(46); u[2][2] != 46 || u[0][0] != 46 {
		t.Fatalf("uniform marks %v", u)
	}
}

// TestAllocatorFollowsAnEnforcedDecision: with the hybrid policy, a decision a switch enforces is
// followed although the estimate (which counts the switch's drops as loss) is far lower; the track
// forwards every layer and sends no padding. When the switch no longer enforces it, the estimate
// limits the track again and the SFU thins.
func TestAllocatorFollowsAnEnforcedDecision(t *testing.T) {
	src, srcMu, recv, d := newSimulcastTrack()
	if _, err := d.Bind(&fakeBinding{rtx: true}); err != nil {
		t.Fatal(err)
	}
	d.Start()
	est := &fakeEstimator{}
	est.rate.Store(int64(60 * cc.Kbps)) // the base layer at most
	est.loss.Store(300)
	cfg := DefaultAllocatorConfig()
	cfg.Policy = policy.NameHybrid
	alloc, err := NewAllocator(cfg, est, nil)
	if err != nil {
		t.Fatal(err)
	}
	alloc.Start()
	defer alloc.Close()
	stop := liveSource(t, recv, src, srcMu)
	defer stop()
	alloc.AddTrack(d, DefaultTrackOptions())
	alloc.SetNetDecision(d, NetDecision{Layers: 9, Known: true, Enforced: true})
	waitUntil := func(what string, ok func() bool) {
		t.Helper()
		for start := Now(); Now()-start < 4*time.Second; time.Sleep(10 * time.Millisecond) {
			if ok() {
				return
			}
		}
		t.Fatalf("%s: target %v, enforced %v, stats %+v", what, d.Target(), d.Enforced(), d.Stats())
	}
	waitUntil("enforced decision of every rung followed", func() bool { return d.Target().Spatial == 2 && d.Enforced() })
	if st := d.Stats(); st.PaddingBytes != 0 {
		t.Fatalf("padding sent while enforced: %+v", st)
	}
	alloc.SetNetDecision(d, NetDecision{Layers: 9, Known: true})
	waitUntil("the estimate limits a decision no switch enforces", func() bool { return d.Target().Spatial == 0 && !d.Enforced() })
}

// Audio carries its own mark on every packet, and recording it allocates nothing.
func TestAudioIsMarked(t *testing.T) {
	bind := &fakeBinding{record: true}
	recv := NewReceiver(ReceiverConfig{Codec: media.CodecOpus}, nil)
	marks := &markLog{}
	d := NewDownTrack(recv, DownTrackConfig{ID: "a", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, Marker: marks})
	if _, err := d.Bind(bind); err != nil {
		t.Fatal(err)
	}
	d.SetMarks(UniformMarks(46))
	d.Start()
	for seq := range uint16(20) {
		recv.WriteRTP(0, opusWithLevel(t, seq, 30), Now())
	}
	sent := bind.sent()
	if len(sent) != 20 {
		t.Fatalf("%d audio packets forwarded, want 20", len(sent))
	}
	for _, p := range sent {
		if m, ok := marks.of(p); !ok || m != 46 {
			t.Fatalf("audio packet %d marked %d (%v), want 46", p.hdr.SequenceNumber, m, ok)
		}
	}
}
