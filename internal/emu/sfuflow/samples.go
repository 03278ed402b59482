package sfuflow

import (
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/sim"
)

// counter is what a session's subscriber counts, per layer: a Pion subscriber's every packet
// (layerCounter), or a browser's getStats samples (sampleCounter).
type counter interface {
	// stats fills the simulator's per-layer counters with what arrived.
	stats(name, policy string, bins int, interval time.Duration) *sim.SessionStats
	// current is the layer (1 = base) received last, 0 before the first.
	current() int
}

// packetCounter is a counter of every packet a Pion subscriber receives.
type packetCounter interface {
	counter
	// observe takes one received RTP packet at time now and returns its media payload size.
	observe(pkt []byte, now time.Duration) int
}

// pageStats is what the subscriber page's sub.stats() returns: the video's inbound-rtp
// counters, cumulative (absent members stay zero).
type pageStats struct {
	State string `json:"state"`
	// Recv is new payload: bytesReceived less retransmitted and FEC bytes.
	Recv float64 `json:"recv"`
	// Pkts is packetsReceived less retransmitted packets; Lost is packetsLost.
	Pkts float64 `json:"pkts"`
	Lost float64 `json:"lost"`
	// W and H are the size of the last frame decoded (0 before the first).
	W      int     `json:"w"`
	H      int     `json:"h"`
	Frames float64 `json:"frames"`
	NACKs  float64 `json:"nacks"`
	PLIs   float64 `json:"plis"`
	// Hdr is headerBytesReceived: the packets' headers and their RTP padding.
	Hdr float64 `json:"hdr"`
}

// sample is one reading of the page's counters at a time on the run's clock.
type sample struct {
	at   time.Duration
	pkts int64 // received, probes included
	lost int64 // cumulative packetsLost: expected (highest sequence number seen) less received
	hdr  int64 // header and padding bytes received
	w, h int
}

// sampleCounter counts what a browser subscriber receives per layer from its getStats samples.
// The layer is the one whose resolution the last decoded frame has: each simulcast encoding has
// its own. A sample's new packets (received and lost) belong to the layer it shows; before the
// first decoded frame they belong to no layer (a Pion subscriber skips the packets before its
// first keyframe, too).
//
// packetsReceived counts strata's probes (padding-only packets on the video's own stream) too,
// which a Pion subscriber sees and leaves out. getStats cannot tell them apart, but its
// headerBytesReceived counts every packet's header and padding, and every probe carries exactly
// sfu.ProbePaddingSize bytes of padding while media carries none: with every packet's header of
// one size h, a sample's probes are (new header bytes - new packets x h) / padding. h is the
// smallest mean header size of a sample: one without probes.
type sampleCounter struct {
	layerOf map[[2]int]int // resolution → layer (0 = base)
	layers  int

	mu      sync.Mutex
	samples []sample
	bytes   []int64 // payload bytes received by each sample (cumulative)
	last    int     // layer (0 = base) of the last sample with a known size, -1 before
}

func newSampleCounter(resolutions [][2]int) *sampleCounter {
	c := &sampleCounter{layerOf: map[[2]int]int{}, layers: len(resolutions), last: -1}
	for i, r := range resolutions {
		c.layerOf[r] = i
	}
	return c
}

// observe keeps one sample of the page's counters.
func (c *sampleCounter) observe(at time.Duration, s pageStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.samples = append(c.samples, sample{at: at, pkts: int64(s.Pkts), lost: int64(s.Lost), hdr: int64(s.Hdr), w: s.W, h: s.H})
	c.bytes = append(c.bytes, int64(s.Recv))
	if l, ok := c.layerOf[[2]int{s.W, s.H}]; ok {
		c.last = l
	}
}

func (c *sampleCounter) current() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last + 1
}

// headerSize is the header size of one packet: the smallest mean over the samples that got at
// least minPackets (0 without such a sample).
func (c *sampleCounter) headerSize() int64 {
	const minPackets = 3
	var size int64
	var prev sample
	for _, s := range c.samples {
		if n := s.pkts - prev.pkts; n >= minPackets {
			if m := (s.hdr - prev.hdr) / n; size == 0 || m < size {
				size = m
			}
		}
		prev = s
	}
	return size
}

// media is the media packets received by each sample (cumulative): packetsReceived less the
// probes, as headerBytesReceived tells them.
func (c *sampleCounter) media() []int64 {
	hdr := c.headerSize()
	out := make([]int64, len(c.samples))
	var prev sample
	var probes int64
	for i, s := range c.samples {
		n := s.pkts - prev.pkts
		if hdr > 0 && n > 0 {
			extra := s.hdr - prev.hdr - n*hdr
			probes += min(n, max(0, (extra+sfu.ProbePaddingSize/2)/sfu.ProbePaddingSize))
		}
		out[i] = s.pkts - probes
		prev = s
	}
	return out
}

// probes is how many probe packets the browser received, as media tells them apart.
func (c *sampleCounter) probes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.samples) == 0 {
		return 0
	}
	return c.samples[len(c.samples)-1].pkts - c.media()[len(c.samples)-1]
}

// stats replays the samples. Between two samples, the packets expected (media received plus
// lost) count as sent and the media received as received, in the later sample's interval and
// layer, their payload shared evenly. packetsLost falls when a packet counted lost arrives late:
// what was counted stays, so a layer never has more packets received than sent.
func (c *sampleCounter) stats(name, policy string, bins int, interval time.Duration) *sim.SessionStats {
	st := sim.NewSessionStats(name, policy, c.layers, bins, interval)
	c.mu.Lock()
	defer c.mu.Unlock()
	media := c.media()
	layer := -1
	var sent, recv, bytes int64 // counted so far
	for i, smp := range c.samples {
		s := smp
		s.pkts = media[i]
		if l, ok := c.layerOf[[2]int{s.w, s.h}]; ok {
			layer = l
		}
		expected := s.pkts + s.lost
		if layer < 0 { // before the first decoded frame
			sent, recv, bytes = expected, s.pkts, c.bytes[i]
			continue
		}
		st.SetForwarded(s.at, layer+1)
		newSent := max(0, expected-sent)
		sent += newSent
		for range newSent {
			st.CountSent(s.at, layer)
		}
		l := &st.Layers[layer]
		newRecv := min(max(0, s.pkts-recv), l.Sent-l.Received)
		recv += newRecv
		if newRecv == 0 {
			continue // the payload goes with the next packets counted
		}
		payload := max(0, c.bytes[i]-bytes)
		bytes = max(bytes, c.bytes[i])
		for k := range newRecv {
			share := payload / newRecv
			if k == 0 {
				share += payload % newRecv
			}
			st.CountReceived(s.at, s.at, layer, int(share))
		}
	}
	return st
}
