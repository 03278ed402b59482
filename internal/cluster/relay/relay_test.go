package relay

import (
	"context"
	"errors"
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

func TestSimulcastFeedCrossesWithEveryLayer(t *testing.T) {
	rs := newRelays(t, "a", "b")
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
}

func TestTwoImportsShareOneStream(t *testing.T) {
	rs := newRelays(t, "a", "b")
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
	// Every packet written at the origin is sent once, not once per importer.
	if sent, wrote := st.PacketsSent-st.Retransmitted, uint64(written()); sent > wrote {
		t.Fatalf("%d packets sent for %d written", sent, wrote)
	}
	one.Release()
	before := sink.count(1)
	eventually(t, "packets after one release", wait, func() bool { return sink.count(1) > before+20 })
	two.Release()
	eventually(t, "the origin stops sending", wait, func() bool { return rs[0].Stats().Links[0].Exports == 0 })
}

func TestLinkLossRecoveredFromOriginCache(t *testing.T) {
	rs := newRelays(t, "a", "b")
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
}

func TestKeyframeRequestsOfTwoEdgesMergeAtOrigin(t *testing.T) {
	rs := newRelays(t, "a", "b", "c")
	src := newVP8Source(1)
	src.keyEvery = 0 // keyframes only when asked
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
	// The publisher's keyframe answers the first request; the second came within the origin's
	// interval and merged with it.
	if got := src.asked[0].Load() - asked; got != 1 {
		t.Fatalf("the publisher was asked %d times for two edges' requests", got)
	}
}

func TestUnexportTellsImporters(t *testing.T) {
	rs := newRelays(t, "a", "b")
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
