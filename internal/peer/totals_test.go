package peer

import (
	"sync"
	"testing"
	"time"

	"github.com/pion/rtcp"

	"github.com/strata-rtc/strata/internal/rtcpview"
)

// What strata sends about the streams it receives is counted on them: NACKed sequence numbers,
// PLIs, FIRs; a stream it does not receive counts nothing.
func TestCountingInterceptorCountsWhatStrataAsks(t *testing.T) {
	set := newCounterSet()
	c := set.stream(true, 1111, KindVideo)
	i := &countingInterceptor{set: set}
	i.countSent([]rtcp.Packet{
		&rtcp.TransportLayerNack{MediaSSRC: 1111, Nacks: []rtcp.NackPair{{PacketID: 10, LostPackets: 0b1}}},
		&rtcp.PictureLossIndication{MediaSSRC: 1111},
		&rtcp.PictureLossIndication{MediaSSRC: 4444},
		&rtcp.FullIntraRequest{FIR: []rtcp.FIREntry{{SSRC: 1111}, {SSRC: 4444}}},
		&rtcp.ReceiverReport{},
	})
	if c.nacked.Load() != 2 || c.plis.Load() != 1 || c.firs.Load() != 1 {
		t.Errorf("nacked %d plis %d firs %d, want 2 1 1", c.nacked.Load(), c.plis.Load(), c.firs.Load())
	}
}

// The RTT observer gets each round-trip time a reception report gives.
func TestRTTObserver(t *testing.T) {
	set := newCounterSet()
	set.stream(false, 1111, KindVideo)
	var got []time.Duration
	i := &countingInterceptor{set: set, rtt: func(d time.Duration) { got = append(got, d) }}
	now := time.Date(2026, 11, 25, 5, 0, 0, 0, time.UTC)
	raw := marshalRTCP(t, &rtcp.ReceiverReport{SSRC: 9, Reports: []rtcp.ReceptionReport{
		{SSRC: 1111, LastSenderReport: rtcpview.CompactNTP(now.Add(-100 * time.Millisecond))},
		{SSRC: 1111}, // no sender report received: no RTT
	}})
	i.readRTCP(raw, now)
	if len(got) != 1 || got[0] < 99*time.Millisecond || got[0] > 101*time.Millisecond {
		t.Errorf("observed %v, want one RTT of 100 ms", got)
	}
}

// Totals sum the open Peers and keep what the closed ones counted, once.
func TestTotalsKeepClosedPeers(t *testing.T) {
	var tot peerTotals
	a, b := &Peer{counters: newCounterSet()}, &Peer{counters: newCounterSet()}
	tot.add(a)
	tot.add(b)
	in := a.counters.stream(true, 1, KindAudio)
	in.packets.Add(10)
	in.bytes.Add(1000)
	in.plis.Add(1)
	out := b.counters.stream(false, 2, KindVideo)
	out.packets.Add(5)
	out.nacked.Add(3)
	out.reportLost.Store(4)
	want := Totals{Live: 2, Created: 2, PLIsOut: 1, NACKsIn: 3, ReportedLost: 4}
	want.RTP[In][KindAudio] = RTPTotals{Packets: 10, Bytes: 1000}
	want.RTP[Out][KindVideo] = RTPTotals{Packets: 5}
	if got := tot.read(); got != want {
		t.Errorf("open: %+v, want %+v", got, want)
	}
	tot.retire(a)
	tot.retire(a) // Close runs once, but a second retire must not count twice
	want.Live = 1
	if got := tot.read(); got != want {
		t.Errorf("one closed: %+v, want %+v", got, want)
	}
	in.packets.Add(1) // after its close: not seen any more
	if got := tot.read(); got != want {
		t.Errorf("after close: %+v, want %+v", got, want)
	}
}

func TestKindOf(t *testing.T) {
	for mime, want := range map[string]MediaKind{"audio/opus": KindAudio, "video/VP8": KindVideo, "video/rtx": KindVideo,
		"Audio/PCMU": KindAudio, "": KindOther, "application/x": KindOther} {
		if got := kindOf(mime); got != want {
			t.Errorf("%q: %v, want %v", mime, got, want)
		}
	}
}

// Peers closing while the totals are read (a scrape during hangups) race with nothing, and the
// packets a closed Peer counted stay counted.
func TestTotalsConcurrent(t *testing.T) {
	var tot peerTotals
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				p := &Peer{counters: newCounterSet()}
				tot.add(p)
				p.counters.stream(true, 1, KindVideo).packets.Add(1)
				tot.retire(p)
			}
		})
	}
	wg.Go(func() {
		for range 200 {
			_ = tot.read()
		}
	})
	wg.Wait()
	if got := tot.read(); got.Live != 0 || got.Created != 400 || got.RTP[In][KindVideo].Packets != 400 {
		t.Errorf("%+v, want 400 created and counted, none live", got)
	}
}
