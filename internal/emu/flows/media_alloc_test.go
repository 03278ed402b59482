//go:build !race

package flows

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// Allocation tests stay out of race builds: the race detector allocates on its own.

// The encoder, packetiser and pacer allocate nothing per packet (nor per frame) once running.
func TestMediaSenderAllocs(t *testing.T) {
	for _, ccName := range []string{"gcc", "nada", "gcc-draft"} {
		s, sink := newBenchSender(t, ccName)
		now := time.Now()
		for range 100 { // warm up: the controller's and the queue's buffers reach their size
			now = now.Add(33 * time.Millisecond)
			s.benchFrame(now)
		}
		before := sink.packets
		allocs := testing.AllocsPerRun(200, func() {
			now = now.Add(33 * time.Millisecond)
			s.benchFrame(now)
		})
		if sink.packets == before {
			t.Fatalf("%s: no packets sent", ccName)
		}
		if allocs > 0 {
			t.Errorf("%s: %.1f allocations per frame (%d packets), want 0", ccName, allocs, (sink.packets-before)/201)
		}
	}
}

// With codec model libvpx the pacer loop's side (handing over captures, queueing and sending
// encoded frames) allocates nothing either; the encoder's goroutine is tested in internal/vp8enc.
func TestMediaSenderLibvpxAllocs(t *testing.T) {
	s, sink := newBenchSender(t, "gcc")
	s.m.spec.Codec.Model, s.m.spec.Codec.Width, s.m.spec.Codec.Height = sim.ModelLibvpx, 320, 180
	vpx, err := newVPXSource(s.m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vpx.enc.Close() })
	s.vpx = vpx
	now := time.Now()
	frame := func() {
		now = now.Add(33 * time.Millisecond)
		s.onFrame(now) // a capture for the encoder (lost: nothing encodes here)
		s.onEncoded(vpxFrame{size: 9000, ts: s.rtpTime(now)})
		for s.pending() {
			s.sendOne(now)
			s.nextSend = now
		}
	}
	for range 100 {
		frame()
	}
	before := sink.packets
	if allocs := testing.AllocsPerRun(200, frame); allocs > 0 {
		t.Errorf("%.1f allocations per frame, want 0", allocs)
	}
	if sink.packets == before || vpx.busy == 0 {
		t.Fatalf("%d packets sent, %d captures handed over", sink.packets-before, vpx.busy)
	}
}

// The receiver's per-packet work (goodput, duplicate check, the receive-side estimator) allocates
// nothing either.
func TestMediaReceiverAllocs(t *testing.T) {
	s, sink := newBenchSender(t, "nada")
	r := newMediaReceiver(s.m, s.est)
	in := incoming{absID: 3}
	now := time.Now()
	var pkts [][]byte
	for range 50 { // the sender's packets, abs-send-time included
		now = now.Add(33 * time.Millisecond)
		s.benchFrame(now)
		pkts = append(pkts, append([]byte(nil), sink.buf[:s.pkt.MarshalSize()]...))
	}
	for _, b := range pkts[:10] {
		r.onPacket(b, in)
	}
	i := 10
	allocs := testing.AllocsPerRun(30, func() {
		r.onPacket(pkts[i], in)
		i++
	})
	if allocs > 0 {
		t.Errorf("%.1f allocations per received packet, want 0", allocs)
	}
	if r.arrived != i {
		t.Errorf("the receive-side estimator saw %d packets, want %d", r.arrived, i)
	}
}
