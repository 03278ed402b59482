package peer

import (
	"strings"
	"sync"
	"time"
)

// Totals are the counters of every PeerConnection a Factory made, summed: those still open read at
// the moment, those closed as they were when they closed. They are what the Prometheus metrics
// export; reading them costs a lock per open Peer, while the media path keeps updating its own
// atomics and never touches them. "In" is what strata receives, "out" what it sends, for RTP and
// for RTCP requests alike: NACKsOut are the sequence numbers strata asked for (loss on what it
// receives), NACKsIn those peers asked strata for.
type Totals struct {
	Live, Created uint64

	// RTP is indexed by direction (In, Out) and media kind.
	RTP [2][NumKinds]RTPTotals

	NACKsIn, NACKsOut uint64
	PLIsIn, PLIsOut   uint64
	FIRsIn, FIRsOut   uint64
	// ReportedLost is the cumulative loss peers reported about the streams strata sends.
	ReportedLost uint64
}

// RTPTotals count the RTP packets of one direction and kind, retransmissions and padding included,
// and their bytes in the clear.
type RTPTotals struct{ Packets, Bytes uint64 }

// The directions of Totals.RTP.
const (
	In  = 0
	Out = 1
)

// MediaKind is a stream's kind, from the MIME type of the codec it was bound with (a
// retransmission stream's "video/rtx" is video).
type MediaKind uint8

// The media kinds; KindOther is a stream whose codec names neither (none, in practice).
const (
	KindAudio MediaKind = iota
	KindVideo
	KindOther
	NumKinds
)

// String is the kind's metric label.
func (k MediaKind) String() string {
	switch k {
	case KindAudio:
		return "audio"
	case KindVideo:
		return "video"
	}
	return "other"
}

func kindOf(mime string) MediaKind {
	switch {
	case len(mime) >= 6 && strings.EqualFold(mime[:6], "audio/"):
		return KindAudio
	case len(mime) >= 6 && strings.EqualFold(mime[:6], "video/"):
		return KindVideo
	}
	return KindOther
}

// peerTotals keeps the live Peers of a Factory and what the closed ones counted.
type peerTotals struct {
	mu      sync.Mutex
	live    map[*Peer]struct{}
	created uint64
	retired Totals
}

func (t *peerTotals) add(p *Peer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live == nil {
		t.live = map[*Peer]struct{}{}
	}
	t.live[p] = struct{}{}
	t.created++
}

// retire folds a closed Peer's counters into the totals. Both happen under one lock, so a reader
// sees its counts either in the live sum or in retired, never twice and never not at all.
func (t *peerTotals) retire(p *Peer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.live[p]; !ok {
		return
	}
	delete(t.live, p)
	p.counters.addTo(&t.retired)
}

func (t *peerTotals) read() Totals {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.retired
	for p := range t.live {
		p.counters.addTo(&out)
	}
	out.Live, out.Created = uint64(len(t.live)), t.created
	return out
}

// Totals sums the counters of every PeerConnection this Factory made (see Totals).
func (f *Factory) Totals() Totals { return f.totals.read() }

// addTo adds the counters of one PeerConnection to t.
func (s *counterSet) addTo(t *Totals) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.in {
		r := &t.RTP[In][c.kind]
		r.Packets += c.packets.Load()
		r.Bytes += c.bytes.Load()
		t.NACKsOut += c.nacked.Load()
		t.PLIsOut += c.plis.Load()
		t.FIRsOut += c.firs.Load()
	}
	for _, c := range s.out {
		r := &t.RTP[Out][c.kind]
		r.Packets += c.packets.Load()
		r.Bytes += c.bytes.Load()
		t.NACKsIn += c.nacked.Load()
		t.PLIsIn += c.plis.Load()
		t.FIRsIn += c.firs.Load()
		if lost := c.reportLost.Load(); lost > 0 {
			t.ReportedLost += uint64(lost)
		}
	}
}

// WithRTTObserver has f called with every round-trip time a peer's reception report gives about a
// stream strata sends (RTCP, a few per second per stream; f must not block or allocate).
func WithRTTObserver(f func(time.Duration)) Option {
	return func(o *factoryOptions) { o.rttObserver = f }
}
