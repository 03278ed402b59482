package sfuflow

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sfu"
)

// pageFeed builds a browser's cumulative getStats samples, 100 ms apart, with 20-byte headers.
type pageFeed struct {
	c   *sampleCounter
	at  time.Duration
	cur pageStats
}

// step adds media packets of size bytes each, probes (padding-only packets), lost packets and
// the last decoded frame's size, and samples.
func (f *pageFeed) step(media, size, probes, lost, w, h int) {
	f.at += 100 * time.Millisecond
	f.cur.Pkts += float64(media + probes)
	f.cur.Recv += float64(media * size)
	f.cur.Hdr += float64((media+probes)*20 + probes*sfu.ProbePaddingSize)
	f.cur.Lost += float64(lost)
	f.cur.W, f.cur.H = w, h
	f.c.observe(f.at, f.cur)
}

func TestSampleCounterLeavesProbesOutAndFollowsTheDecodedSize(t *testing.T) {
	f := &pageFeed{c: newSampleCounter([][2]int{{320, 180}, {640, 360}})}
	f.step(5, 1000, 0, 0, 0, 0)       // before the first decoded frame: no layer
	f.step(10, 1000, 0, 0, 320, 180)  // base
	f.step(10, 1000, 6, 2, 320, 180)  // base, with probes and 2 lost
	f.step(20, 1000, 0, 0, 640, 360)  // top
	f.step(20, 1000, 30, 1, 640, 360) // top, mostly probes, 1 lost
	f.step(1, 1000, 0, -1, 640, 360)  // the lost packet arrives late
	f.step(10, 1000, 0, 0, 1280, 720) // a size no layer has: still the top
	if f.c.current() != 2 {
		t.Errorf("current layer %d, want 2", f.c.current())
	}
	st := f.c.stats("s", "bwe", 20, 100*time.Millisecond)
	got := [][3]int64{{st.Layers[0].Sent, st.Layers[0].Received, st.Layers[0].GoodputBytes},
		{st.Layers[1].Sent, st.Layers[1].Received, st.Layers[1].GoodputBytes}}
	// Base: 20 media + 2 lost sent, 20 received; top: 20+20+10 media and 1 lost (counted sent,
	// then received when it came late), the probes nowhere.
	want := [][3]int64{{22, 20, 20000}, {51, 51, 51000}}
	if got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("sent/received/goodput per layer %v, want %v", got, want)
	}
	if st.BinForwarded[2] != 1 || st.BinForwarded[4] != 2 || st.BinForwarded[7] != 2 {
		t.Errorf("forwarded per bin %v", st.BinForwarded[:9])
	}
	if st.Layers[1].BinSent[5] != 21 || st.Layers[1].BinGood[5] != 20000 {
		t.Errorf("top layer in bin 5: sent %d, goodput %d", st.Layers[1].BinSent[5], st.Layers[1].BinGood[5])
	}
}

// Samples of any shape (counters that fall, sizes of no layer) never give a layer more packets
// received than sent, nor negative counts.
func FuzzSampleCounter(f *testing.F) {
	f.Add([]byte{5, 0, 0, 1, 10, 3, 2, 1, 0, 0, 0, 0})
	f.Add([]byte{200, 255, 7, 0, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		c := newSampleCounter([][2]int{{320, 180}, {640, 360}})
		var s pageStats
		for i := 0; i+4 <= len(b); i += 4 {
			v := binary.BigEndian.Uint32(b[i:])
			s.Pkts += float64(int8(v >> 24))
			s.Lost += float64(int8(v >> 16))
			s.Hdr += float64(int8(v>>8)) * 40
			s.Recv += float64(v & 0x7f * 100)
			s.W, s.H = [][2]int{{0, 0}, {320, 180}, {640, 360}, {1, 1}}[v>>7&3][0], [][2]int{{0, 0}, {320, 180}, {640, 360}, {1, 1}}[v>>7&3][1]
			c.observe(time.Duration(i)*time.Millisecond, s)
		}
		for _, l := range c.stats("s", "bwe", 10, 100*time.Millisecond).Layers {
			if l.Received < 0 || l.Received > l.Sent || l.GoodputBytes < 0 {
				t.Fatalf("sent %d, received %d, goodput %d", l.Sent, l.Received, l.GoodputBytes)
			}
		}
	})
}
