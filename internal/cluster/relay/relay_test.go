package relay

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

const wait = 10 * time.Second

// originFeed exports a VP8 simulcast feed of the given layers on r, fed by a running source.
func originFeed(t *testing.T, r *Relay, feed string, layers int) (*vp8Source, *sfu.Receiver, func() int64) {
	t.Helper()
	src := newVP8Source(layers)
	recv := sfu.NewReceiver(sfu.ReceiverConfig{ID: "origin", Codec: media.CodecVP8, Simulcast: layers > 1}, src.requester)
	if err := r.Export(feed, []Stream{vp8Stream(recv, layers)}); err != nil {
		t.Fatal(err)
	}
	return src, recv, pump(t, src, recv)
}

func importFeed(t *testing.T, r *Relay, origin, feed string) *Import {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	imp, err := r.Import(ctx, origin, feed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(imp.Release)
	return imp
}

// forTransports runs a test over DTLS-SRTP links and over plain RTP ones.
func forTransports(t *testing.T, f func(t *testing.T, transport string)) {
	for _, tr := range []string{"srtp", "rtp"} {
		t.Run(tr, func(t *testing.T) { f(t, tr) })
	}
}

func withTransport(tr string) func(*Config) { return func(c *Config) { c.Transport = tr } }

func TestTransportsMustAgree(t *testing.T) {
	n := &testNet{handlers: map[string]map[string]handler{}}
	a := n.join(t, "a", withTransport("rtp"))
	b := n.join(t, "b", withTransport("srtp"))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	originFeed(t, a, "feed", 1)
	originFeed(t, b, "feed", 1)
	if _, err := n.join(t, "c", withTransport("srtp")).Import(ctx, "a", "feed"); err == nil || !strings.Contains(err.Error(), "transport") {
		t.Fatalf("an SRTP node importing over a plain link: %v", err)
	}
	if _, err := a.Import(ctx, "b", "feed"); err == nil || !strings.Contains(err.Error(), "transport") {
		t.Fatalf("a plain node importing from an SRTP one: %v", err)
	}
}

func TestSimulcastFeedCrossesWithEveryLayer(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		rs := newRelaysWith(t, withTransport(tr), "a", "b")
		originFeed(t, rs[0], "feed", 3)
		imp := importFeed(t, rs[1], "a", "feed")
		recv := imp.Receivers()["v"]
		if recv == nil || !recv.Config().Simulcast || recv.Codec() != media.CodecVP8 {
			t.Fatalf("edge receiver %+v", recv)
		}
		sink := newLayerSink()
		recv.AddSink(sink)
		eventually(t, "every layer on the edge", wait, func() bool {
			return sink.count(0) > 20 && sink.count(1) > 20 && sink.count(2) > 20
		})

		// A subscriber's DownTrack on the edge switches layers; each switch needs a keyframe of the new
		// layer, which the edge asks the origin's publisher for over the link.
		sub := &binding{}
		d := sfu.NewDownTrack(recv, sfu.DownTrackConfig{ID: "v", StreamID: "s", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}})
		if _, err := d.Bind(sub); err != nil {
			t.Fatal(err)
		}
		d.Start()
		defer d.Stop()
		for _, layer := range []int8{2, 0, 1} {
			d.SetTarget(sfu.Layer{Spatial: layer, Temporal: 2})
			eventually(t, "the down-track on the new layer", wait, func() bool { return d.Current().Spatial == layer })
		}
		if sub.packets.Load() == 0 {
			t.Fatal("the subscriber got nothing")
		}
		if st := rs[1].Stats(); st.KeyframeRequestsSent == 0 || rs[0].Stats().KeyframeRequestsReceived == 0 {
			t.Fatalf("no keyframe request crossed: edge %+v", st)
		}
	})
}

func TestTwoImportsShareOneStream(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		rs := newRelaysWith(t, withTransport(tr), "a", "b")
		_, _, written := originFeed(t, rs[0], "feed", 2)
		one := importFeed(t, rs[1], "a", "feed")
		two := importFeed(t, rs[1], "a", "feed")
		if one.Receivers()["v"] != two.Receivers()["v"] {
			t.Fatal("two imports of one feed got different receivers")
		}
		sink := newLayerSink()
		one.Receivers()["v"].AddSink(sink)
		eventually(t, "packets on the edge", wait, func() bool { return sink.count(1) > 50 })
		st := rs[0].Stats()
		if len(st.Links) != 1 || st.Links[0].Exports != 1 || rs[1].Stats().Imports != 1 {
			t.Fatalf("origin %+v, edge %+v", st, rs[1].Stats())
		}
		// Every packet written at the origin is sent once, not once per importer. The source counts
		// a frame's packets (2 layers × 2) once it wrote them all, after the relay sent them: one
		// frame may be sent and not yet counted as written.
		const frame = 4
		if sent, wrote := st.PacketsSent-st.Retransmitted, uint64(written()); sent > wrote+frame {
			t.Fatalf("%d packets sent for %d written", sent, wrote)
		}
		one.Release()
		before := sink.count(1)
		eventually(t, "packets after one release", wait, func() bool { return sink.count(1) > before+20 })
		two.Release()
		eventually(t, "the origin stops sending", wait, func() bool { return rs[0].Stats().Links[0].Exports == 0 })

		// Packets still in flight after the release reach the edge on SSRCs nobody reads any more; the
		// link goes on, and a new import gets the feed again.
		again := importFeed(t, rs[1], "a", "feed")
		if again.Receivers()["v"] == one.Receivers()["v"] {
			t.Fatal("a released import's receiver was reused")
		}
		sink = newLayerSink()
		again.Receivers()["v"].AddSink(sink)
		eventually(t, "packets after importing again", wait, func() bool { return sink.count(0) > 20 })
	})
}

func TestLinkLossRecoveredFromOriginCache(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		rs := newRelaysWith(t, withTransport(tr), "a", "b")
		var mu sync.Mutex
		dropped := map[uint32]map[uint16]bool{}
		drop := func(ssrc uint32, seq uint16) bool {
			if seq%7 != 3 {
				return false
			}
			mu.Lock()
			defer mu.Unlock()
			if dropped[ssrc] == nil {
				dropped[ssrc] = map[uint16]bool{}
			}
			if dropped[ssrc][seq] {
				return false // the retransmission passes
			}
			dropped[ssrc][seq] = true
			return true
		}
		rs[1].dropIncoming.Store(&drop)
		_, _, _ = originFeed(t, rs[0], "feed", 1)
		imp := importFeed(t, rs[1], "a", "feed")
		sink := newLayerSink()
		imp.Receivers()["v"].AddSink(sink)
		eventually(t, "losses on the link", wait, func() bool { return sink.count(0) > 200 })
		eventually(t, "every lost packet recovered", wait, func() bool {
			sink.mu.Lock()
			defer sink.mu.Unlock()
			lo, hi, n := uint16(0), uint16(0), 0
			for seq := range sink.seqs[0] {
				if n == 0 || int16(seq-lo) < 0 {
					lo = seq
				}
				if n == 0 || int16(seq-hi) > 0 {
					hi = seq
				}
				n++
			}
			// Everything but the newest packets (whose losses may be in flight) arrived.
			for seq := lo; seq != hi-20; seq++ {
				if !sink.seqs[0][seq] {
					return false
				}
			}
			return true
		})
		a, b := rs[0].Stats(), rs[1].Stats()
		if b.NACKsSent == 0 || a.NACKsReceived == 0 || a.Retransmitted == 0 {
			t.Fatalf("origin %+v edge %+v", a, b)
		}
	})
}

// 5 % of the packets lost at random on the link, retransmissions included: the edge's NACKs (up to
// three per packet) recover nearly all of them.
func TestRandomLinkLossRecovered(t *testing.T) {
	rs := newRelays(t, "a", "b")
	var mu sync.Mutex
	rnd := rand.New(rand.NewPCG(1, 2))
	drop := func(uint32, uint16) bool {
		mu.Lock()
		defer mu.Unlock()
		return rnd.Float64() < 0.05
	}
	rs[1].dropIncoming.Store(&drop)
	originFeed(t, rs[0], "feed", 1)
	imp := importFeed(t, rs[1], "a", "feed")
	sink := newLayerSink()
	imp.Receivers()["v"].AddSink(sink)
	// Of the first 300 packets sent after the import (the source starts at 100 before it), at
	// most 1 % stays missing.
	eventually(t, "the losses recovered", wait, func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		if len(sink.seqs[0]) < 320 {
			return false
		}
		lo := uint16(0xffff)
		for seq := range sink.seqs[0] {
			lo = min(lo, seq)
		}
		missing := 0
		for seq := lo; seq != lo+300; seq++ {
			if !sink.seqs[0][seq] {
				missing++
			}
		}
		return missing <= 3
	})
	if st := rs[1].Stats(); st.NACKsSent == 0 {
		t.Fatalf("no NACK: edge %+v", st)
	}
}

func TestKeyframeRequestsOfTwoEdgesMergeAtOrigin(t *testing.T) {
	rs := newRelays(t, "a", "b", "c")
	src := newVP8Source(1)
	// One keyframe at the start, none after: the origin's request stays outstanding (and merges
	// what follows) for its whole keyframe interval.
	src.keyEvery, src.deaf = 0, true
	origin := sfu.NewReceiver(sfu.ReceiverConfig{Codec: media.CodecVP8, KeyframeInterval: 5 * time.Second}, src.requester)
	if err := rs[0].Export("feed", []Stream{vp8Stream(origin, 1)}); err != nil {
		t.Fatal(err)
	}
	pump(t, src, origin)
	b, c := importFeed(t, rs[1], "a", "feed"), importFeed(t, rs[2], "a", "feed")
	eventually(t, "the first keyframe", wait, func() bool { _, ok := origin.LastKeyframe(0); return ok })
	sinkB, sinkC := newLayerSink(), newLayerSink()
	b.Receivers()["v"].AddSink(sinkB)
	c.Receivers()["v"].AddSink(sinkC)
	eventually(t, "both edges receiving", wait, func() bool { return sinkB.count(0) > 10 && sinkC.count(0) > 10 })
	asked := src.asked[0].Load()
	now := sfu.Now()
	b.Receivers()["v"].RequestKeyframe(0, now)
	c.Receivers()["v"].RequestKeyframe(0, now)
	eventually(t, "both requests at the origin", wait, func() bool { return rs[0].Stats().KeyframeRequestsReceived >= 2 })
	// The first request reached the publisher; the second came within the origin's interval and
	// merged with it.
	if got := src.asked[0].Load() - asked; got != 1 {
		t.Fatalf("the publisher was asked %d times for two edges' requests", got)
	}
}

func TestUnexportTellsImporters(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		rs := newRelaysWith(t, withTransport(tr), "a", "b")
		originFeed(t, rs[0], "feed", 1)
		imp := importFeed(t, rs[1], "a", "feed")
		gone := make(chan struct{})
		imp.OnGone(func() { close(gone) })
		rs[0].Unexport("feed")
		select {
		case <-gone:
		case <-time.After(wait):
			t.Fatal("the importer was not told")
		}
		if st := rs[1].Stats(); st.Imports != 0 {
			t.Fatalf("edge still imports: %+v", st)
		}
		late := make(chan struct{})
		imp.OnGone(func() { close(late) })
		<-late // a callback set after the fact is called too

		// Exported again (the publisher came back), the feed is imported anew.
		originFeed(t, rs[0], "feed", 1)
		again := importFeed(t, rs[1], "a", "feed")
		if again.Descriptor().Generation == imp.Descriptor().Generation {
			t.Fatal("the new export has the old generation")
		}
		sink := newLayerSink()
		again.Receivers()["v"].AddSink(sink)
		eventually(t, "packets of the new export", wait, func() bool { return sink.count(0) > 10 })
	})
}

func TestLinkFailureTellsImporters(t *testing.T) {
	rs := newRelays(t, "a", "b")
	originFeed(t, rs[0], "feed", 1)
	imp := importFeed(t, rs[1], "a", "feed")
	gone := make(chan struct{})
	imp.OnGone(func() { close(gone) })
	rs[0].Close() // the origin node goes away
	select {
	case <-gone:
	case <-time.After(wait):
		t.Fatal("the importer was not told of the failed link")
	}
}

func TestPeerGoneEndsItsFeeds(t *testing.T) {
	rs := newRelays(t, "a", "b")
	originFeed(t, rs[0], "feed", 1)
	imp := importFeed(t, rs[1], "a", "feed")
	gone := make(chan struct{})
	imp.OnGone(func() { close(gone) })
	rs[1].PeerGone("a") // the membership says a's record lapsed
	select {
	case <-gone:
	case <-time.After(wait):
		t.Fatal("the importer was not told")
	}
	if st := rs[1].Stats(); len(st.Links) != 0 || st.Imports != 0 {
		t.Fatalf("edge after the peer left: %+v", st)
	}
}

// A node that restarts under its id before its peer noticed the old link fail gets a new link at
// once (the old run's link is not mistaken for its own).
func TestRestartedNodeGetsNewLink(t *testing.T) {
	n := &testNet{handlers: map[string]map[string]handler{}}
	a := n.join(t, "a", func(*Config) {})
	b1 := n.join(t, "b", func(c *Config) { c.FailedTimeout = time.Minute }) // killed: never says goodbye
	originFeed(t, a, "feed", 1)
	importFeed(t, b1, "a", "feed")
	b2 := n.join(t, "b", func(*Config) {}) // the restarted b
	imp := importFeed(t, b2, "a", "feed")
	sink := newLayerSink()
	imp.Receivers()["v"].AddSink(sink)
	eventually(t, "packets to the restarted node", wait, func() bool { return sink.count(0) > 10 })
}

// An origin that restarts under its id: the edge's link to its earlier run is replaced at once.
func TestRestartedOriginGetsNewLink(t *testing.T) {
	n := &testNet{handlers: map[string]map[string]handler{}}
	a1 := n.join(t, "a", func(c *Config) { c.FailedTimeout = time.Minute }) // killed: never says goodbye
	b := n.join(t, "b", func(c *Config) { c.FailedTimeout = time.Minute })
	originFeed(t, a1, "feed", 1)
	importFeed(t, b, "a", "feed")
	a2 := n.join(t, "a", func(*Config) {})
	originFeed(t, a2, "feed2", 1)
	imp := importFeed(t, b, "a", "feed2")
	sink := newLayerSink()
	imp.Receivers()["v"].AddSink(sink)
	eventually(t, "packets from the restarted origin", wait, func() bool { return sink.count(0) > 10 })
}

// The edge may be the node with the smaller id: it asks the origin to set up the link.
func TestEdgeWithSmallerIDGetsLink(t *testing.T) {
	rs := newRelays(t, "a", "b")
	originFeed(t, rs[1], "feed", 1)
	imp := importFeed(t, rs[0], "b", "feed")
	sink := newLayerSink()
	imp.Receivers()["v"].AddSink(sink)
	eventually(t, "packets from b", wait, func() bool { return sink.count(0) > 10 })
	// A feed the other way uses the same link.
	originFeed(t, rs[0], "back", 1)
	importFeed(t, rs[1], "a", "back")
	if n := len(rs[0].Stats().Links); n != 1 {
		t.Fatalf("%d links between two nodes", n)
	}
}

// With one configured port every link of a node shares one UDP socket.
func TestLinksOnOneConfiguredPort(t *testing.T) {
	rs := newRelaysWith(t, func(c *Config) {
		port := freeUDPPort(t)
		c.PortMin, c.PortMax = port, port
	}, "a", "b", "c")
	originFeed(t, rs[0], "feed", 1)
	for _, edge := range rs[1:] {
		imp := importFeed(t, edge, "a", "feed")
		sink := newLayerSink()
		imp.Receivers()["v"].AddSink(sink)
		eventually(t, "packets over the shared port", wait, func() bool { return sink.count(0) > 10 })
	}
	if n := len(rs[0].Stats().Links); n != 2 {
		t.Fatalf("origin has %d links", n)
	}
}

func freeUDPPort(t *testing.T) uint16 {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return uint16(c.LocalAddr().(*net.UDPAddr).Port)
}

func TestOpusWithAudioLevelCrosses(t *testing.T) {
	rs := newRelays(t, "a", "b")
	origin := sfu.NewReceiver(sfu.ReceiverConfig{Codec: media.CodecOpus, Extensions: sfu.ExtIDs{AudioLevel: 5}}, nil)
	err := rs[0].Export("talk", []Stream{{Mid: "a", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2, SDPFmtpLine: "minptime=10;useinbandfec=1"}, PayloadType: 111, Layers: 1, Receiver: origin}})
	if err != nil {
		t.Fatal(err)
	}
	imp := importFeed(t, rs[1], "a", "talk")
	edge := imp.Receivers()["a"]
	if d := imp.Descriptor().Streams[0]; d.Kind != "audio" || d.Codec.Fmtp != "minptime=10;useinbandfec=1" || edge.Config().Extensions.AudioLevel == 0 {
		t.Fatalf("descriptor %+v, edge extensions %+v", d, edge.Config().Extensions)
	}
	levels := make(chan float64, 10)
	edge.OnAudioLevel(func(avg float64) {
		select {
		case levels <- avg:
		default:
		}
	})
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for seq := uint16(0); ; seq++ {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			// One-byte extension id 5: level 30 dBov with the voice bit.
			pkt := []byte{0x90, 111, byte(seq >> 8), byte(seq), 0, 0, byte(seq >> 8), byte(seq), 0, 0, 0, 9,
				0xBE, 0xDE, 0, 1, 5 << 4, 0x80 | 30, 0, 0, 0xfc, 0xff, 0xfe}
			origin.WriteRTP(0, pkt, sfu.Now())
		}
	}()
	select {
	case avg := <-levels:
		if avg != 30 {
			t.Fatalf("edge audio level %v, want 30", avg)
		}
	case <-time.After(wait):
		t.Fatal("no audio level on the edge")
	}
}

func TestBadRequestsRefused(t *testing.T) {
	rs := newRelays(t, "a", "b")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := rs[1].Import(ctx, "a", "nothing"); !errors.Is(err, ErrNoFeed) {
		t.Fatalf("importing a feed that does not exist: %v", err)
	}
	if _, err := rs[1].Import(ctx, "b", "self"); err == nil {
		t.Fatal("importing from itself")
	}
	originFeed(t, rs[0], "feed", 2)
	imp := importFeed(t, rs[1], "a", "feed")
	gen := imp.Descriptor().Generation
	used := imp.shared.streams[0].layers[0].ssrc
	for _, c := range []struct {
		name  string
		ssrcs [][]uint32
		want  error
	}{
		{"an SSRC the link already carries", [][]uint32{{used, used | 0x1000}}, ErrSSRCCollision},
		{"one SSRC twice", [][]uint32{{0x80000011, 0x80000011}}, ErrSSRCCollision},
		{"an SSRC of the other node's half", [][]uint32{{0x11, 0x12}}, ErrSSRCCollision},
		{"too few layers", [][]uint32{{0x80000021}}, ErrBadDescriptor},
		{"too many streams", [][]uint32{{0x80000031, 0x80000032}, {0x80000033}}, ErrBadDescriptor},
	} {
		// From a third name, so the existing subscription of b does not answer first.
		rs[0].mu.Lock()
		l := rs[0].links["b"]
		e := rs[0].exports["feed"]
		err := rs[0].checkSSRCs(l, e, c.ssrcs)
		rs[0].mu.Unlock()
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	_, err := rs[0].handleSubscribe(ctx, "b", []byte(`{"feed":"feed","generation":`+strconv.FormatUint(gen+1, 10)+`,"ssrcs":[[2147483700,2147483701]]}`))
	if !errors.Is(err, ErrGenerationGone) {
		t.Errorf("a stale generation: %v", err)
	}
	if _, err := rs[0].handleSubscribe(ctx, "b", []byte(`{"feed":`)); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("a malformed request: %v", err)
	}
	if _, err := rs[0].handleLink(ctx, "z", []byte(`{"sdp":"v=0"}`)); err == nil {
		t.Error("a link offer from a larger id was taken")
	}
	if err := rs[0].Export("bad", []Stream{{Mid: "x", Codec: webrtc.RTPCodecCapability{MimeType: "video/foo", ClockRate: 90000}, Layers: 1, Receiver: sfu.NewReceiver(sfu.ReceiverConfig{Codec: media.CodecVP8}, nil)}}); !errors.Is(err, ErrUnknownCodec) {
		t.Errorf("exporting an unknown codec: %v", err)
	}
}
