//go:build !race

// The race detector's instrumentation allocates on its own; these tests run in the plain pass.

package sfu

import (
	"net"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/media/mediatest"
)

// replay feeds recorded packets of several layers to a receiver again and again, renumbered so
// that the stream stays valid (a replayed packet would otherwise be dropped as a duplicate).
type replay struct {
	recv   *Receiver
	layers [][][]byte // per layer, its packets in order
	frames int        // packets of a layer per replayed frame
	seq    []uint16
	ts     uint32
	now    time.Duration
	next   int
}

// frame writes the next frame of every layer.
func (r *replay) frame() {
	for l, pkts := range r.layers {
		for k := range r.frames {
			p := pkts[(r.next*r.frames+k)%len(pkts)]
			media.SetSeq(p, r.seq[l])
			media.SetTimestamp(p, r.ts)
			r.seq[l]++
			r.recv.WriteRTP(l, p, r.now)
		}
	}
	r.next++
	r.ts += 3000
	r.now += 33 * time.Millisecond
}

// boundDownTrack is a down-track of recv bound to a counting binding, forwarding target.
func boundDownTrack(t *testing.T, recv *Receiver, mime string, target Layer, exts ...webrtc.RTPHeaderExtensionParameter) *fakeBinding {
	t.Helper()
	bind := &fakeBinding{rtx: true, exts: exts}
	d := NewDownTrack(recv, DownTrackConfig{ID: "t", Codec: webrtc.RTPCodecCapability{MimeType: mime}, RespondNACK: true})
	if _, err := d.Bind(bind); err != nil {
		t.Fatal(err)
	}
	d.SetTarget(target)
	d.Start()
	return bind
}

func mustNotAllocate(t *testing.T, name string, r *replay, binds ...*fakeBinding) {
	t.Helper()
	r.frame() // the first keyframe starts every down-track
	before := make([]int, len(binds))
	for i, b := range binds {
		before[i] = b.count
	}
	if allocs := testing.AllocsPerRun(200, r.frame); allocs != 0 {
		t.Errorf("%s: %.1f allocations per frame, want 0", name, allocs)
	}
	for i, b := range binds {
		if b.count-before[i] < 200 {
			t.Fatalf("%s: down-track %d wrote %d packets in 200 frames: the test measured nothing", name, i, b.count-before[i])
		}
	}
}

// TestForwardingAllocatesNothing holds the forwarding path — Receiver in, selection, rewrite (with
// a payload copy for picture ids), header and extensions, DownTrack out — at zero allocations per
// packet, for simulcast with temporal layers dropped, VP9 SVC with spatial layers dropped, and
// audio with a forwarded extension.
func TestForwardingAllocatesNothing(t *testing.T) {
	t.Run("vp8 simulcast", func(t *testing.T) {
		recv := NewReceiver(ReceiverConfig{Codec: media.CodecVP8, Simulcast: true}, nil)
		top := boundDownTrack(t, recv, webrtc.MimeTypeVP8, lay(2, 2))
		mid := boundDownTrack(t, recv, webrtc.MimeTypeVP8, lay(1, 1)) // drops temporal layer 2
		src := newVP8Source()
		src.perFrame, src.body = 3, [3]int{300, 600, 1100}
		r := &replay{recv: recv, frames: 3, seq: []uint16{1, 1000, 60000}, layers: make([][][]byte, 3)}
		for range 8 {
			for l, pkts := range src.nextFrame() {
				r.layers[l] = append(r.layers[l], pkts...)
			}
		}
		mustNotAllocate(t, "vp8", r, top, mid)
	})
	t.Run("vp9 svc", func(t *testing.T) {
		recv := NewReceiver(ReceiverConfig{Codec: media.CodecVP9}, nil)
		low := boundDownTrack(t, recv, webrtc.MimeTypeVP9, lay(1, 2)) // drops spatial layer 2, moves the marker
		seq := uint16(0)
		var pkts [][]byte
		for pic := range 8 {
			pkts = append(pkts, mediatest.VP9Picture(&seq, 0, uint16(pic), 0, 0, pic == 0)...)
		}
		r := &replay{recv: recv, frames: 3, seq: []uint16{7}, layers: [][][]byte{pkts}}
		mustNotAllocate(t, "vp9", r, low)
	})
	t.Run("opus with audio level", func(t *testing.T) {
		recv := NewReceiver(ReceiverConfig{Codec: media.CodecOpus, Extensions: ExtIDs{AudioLevel: 1}}, nil)
		level := webrtc.RTPHeaderExtensionParameter{URI: AudioLevelURI, ID: 3}
		bind := boundDownTrack(t, recv, webrtc.MimeTypeOpus, Layer{}, level)
		r := &replay{recv: recv, frames: 1, seq: []uint16{9}, layers: [][][]byte{{opusWithLevel(t, 0, 30)}}}
		mustNotAllocate(t, "opus", r, bind)
	})
}

// TestForwarderAllocatesNothing: relaying a packet as RTP or SRTP costs no allocation either.
func TestForwarderAllocatesNothing(t *testing.T) {
	sink, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	go func() {
		buf := make([]byte, 2000)
		for {
			if _, err := sink.Read(buf); err != nil {
				return
			}
		}
	}()
	key, err := ParseSRTPKey(80, testSRTPCrypto)
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []ForwarderConfig{{SSRC: 5, PayloadType: 100}, {SRTP: key}} {
		recv := NewReceiver(ReceiverConfig{Codec: media.CodecOpus}, nil)
		f, err := NewForwarder(sink.LocalAddr().(*net.UDPAddr), cfg)
		if err != nil {
			t.Fatal(err)
		}
		recv.AddSink(f)
		r := &replay{recv: recv, frames: 1, seq: []uint16{9}, layers: [][][]byte{{opusWithLevel(t, 0, 30)}}}
		r.frame()
		if allocs := testing.AllocsPerRun(200, r.frame); allocs != 0 {
			t.Errorf("forwarder %+v: %.1f allocations per packet, want 0", cfg, allocs)
		}
		if st := f.Stats(); st.Packets < 200 || st.Errors != 0 {
			t.Fatalf("forwarder sent %+v", st)
		}
		_ = f.Close()
	}
}

// TestFeedbackAllocatesNothing: a subscriber's compound feedback — receiver report,
// transport-wide feedback, a NACK answered from the cache and a PLI — is read without an
// allocation (HandleRTCP parses the raw packet in place).
func TestFeedbackAllocatesNothing(t *testing.T) {
	d, fb, now := feedbackFixture(t)
	if allocs := testing.AllocsPerRun(200, func() { d.HandleRTCP(fb, now) }); allocs != 0 {
		t.Errorf("%.1f allocations per feedback packet, want 0", allocs)
	}
	if st := d.Stats(); st.NACKed < 200 || st.Retransmitted == 0 || st.KeyframeRequests < 200 {
		t.Fatalf("the feedback was not read: %+v", st)
	}
}
