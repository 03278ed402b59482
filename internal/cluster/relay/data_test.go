package relay

import (
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

// recordChannel is a subscriber's data channel on the edge: it keeps what it is sent.
type recordChannel struct {
	mu     sync.Mutex
	msgs   []dataMessage
	closed bool
}

type dataMessage struct {
	text   string
	binary bool
}

func (c *recordChannel) Send(msg []byte, binary bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, dataMessage{string(msg), binary})
	return nil
}

func (c *recordChannel) BufferedAmount() uint64 { return 0 }

func (c *recordChannel) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return nil
}

func (c *recordChannel) got() ([]dataMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]dataMessage(nil), c.msgs...), c.closed
}

// subscribe attaches a recording subscriber channel to an edge's data receiver.
func subscribe(t *testing.T, recv *sfu.DataReceiver) *recordChannel {
	t.Helper()
	if recv == nil {
		t.Fatal("no data receiver on the edge")
	}
	ch := &recordChannel{}
	sink := sfu.NewDataSink(ch, sfu.DefaultDataSinkConfig())
	sink.Opened()
	if !recv.AddSink(sink) {
		t.Fatal("the edge's data receiver is closed")
	}
	return ch
}

// originDataFeed exports a feed of a VP8 stream ("v") and a data stream ("d") on r.
func originDataFeed(t *testing.T, r *Relay, feed string) *sfu.DataReceiver {
	t.Helper()
	src := newVP8Source(1)
	recv := sfu.NewReceiver(sfu.ReceiverConfig{ID: "origin", Codec: media.CodecVP8}, src.requester)
	data := sfu.NewDataReceiver(false)
	t.Cleanup(data.Close)
	if err := r.Export(feed, []Stream{vp8Stream(recv, 1), {Mid: "d", Data: data}}); err != nil {
		t.Fatal(err)
	}
	pump(t, src, recv)
	return data
}

// messagesCross writes a text and a binary message at the origin and waits for both on ch.
func messagesCross(t *testing.T, data *sfu.DataReceiver, ch *recordChannel, tag string) {
	t.Helper()
	had, _ := ch.got()
	data.Write([]byte("text "+tag), false)
	data.Write([]byte{0, 1, 2, 0xff}, true)
	want := []dataMessage{{"text " + tag, false}, {"\x00\x01\x02\xff", true}}
	eventually(t, "the messages on the edge", wait, func() bool {
		got, _ := ch.got()
		return len(got) >= len(had)+len(want)
	})
	got, _ := ch.got()
	for i, w := range want {
		if len(got) != len(had)+len(want) || got[len(had)+i] != w {
			t.Fatalf("edge got %+v, want %+v at the end", got, want)
		}
	}
}

// A feed's data stream crosses a link once whatever the importers, in both directions of one link
// at once (each edge picks its channels from its half of the ids); the last release ends it on both
// sides, and the goroutines of its channels end with the relays.
func TestDataStreamCrosses(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("relays", func(t *testing.T) {
		rs := newRelays(t, "a", "b")
		dataA := originDataFeed(t, rs[0], "fa")
		dataB := originDataFeed(t, rs[1], "fb")
		onB := importFeed(t, rs[1], "a", "fa")
		onA := importFeed(t, rs[0], "b", "fb")
		again := importFeed(t, rs[1], "a", "fa")
		if onB.DataReceivers()["d"] != again.DataReceivers()["d"] || onB.Receivers()["v"] == nil {
			t.Fatalf("two imports of one feed: data %v and %v", onB.DataReceivers(), again.DataReceivers())
		}
		subB, subA := subscribe(t, onB.DataReceivers()["d"]), subscribe(t, onA.DataReceivers()["d"])
		messagesCross(t, dataA, subB, "a→b")
		messagesCross(t, dataB, subA, "b→a")
		if st := rs[0].Stats(); st.DataSent != 2 || st.DataReceived != 2 || st.DataDropped != 0 {
			t.Fatalf("a's data counts: %+v", st)
		}
		if dataA.Stats().Sinks != 1 {
			t.Fatalf("the origin's data stream has %d sinks for one edge", dataA.Stats().Sinks)
		}

		onB.Release()
		messagesCross(t, dataA, subB, "one importer left")
		again.Release()
		eventually(t, "the edge's data stream closing", wait, func() bool { _, closed := subB.got(); return closed })
		rs[1].mu.Lock()
		inUse := len(rs[1].dataChannels["a"])
		rs[1].mu.Unlock()
		if inUse != 0 {
			t.Fatalf("b holds %d data channel ids with a after the release", inUse)
		}
		eventually(t, "the origin's sink going", wait, func() bool { return dataA.Stats().Sinks == 0 })
		messagesCross(t, dataB, subA, "the other direction goes on")

		// Imported again, the feed's data gets a new channel.
		third := importFeed(t, rs[1], "a", "fa")
		messagesCross(t, dataA, subscribe(t, third.DataReceivers()["d"]), "again")
		if st := rs[0].Stats(); st.DataSent != 6 {
			t.Fatalf("a sent %d data messages, want 6 (released sinks counted)", st.DataSent)
		}
	})
	eventually(t, "the goroutines ending", wait, func() bool { return runtime.NumGoroutine() <= before })
}

// Unexport and a link that fails close the edge's data stream, as they end the media.
func TestDataStreamEndsWithTheFeed(t *testing.T) {
	rs := newRelays(t, "a", "b", "c")
	originDataFeed(t, rs[0], "feed")
	originDataFeed(t, rs[2], "feed")
	fromA := subscribe(t, importFeed(t, rs[1], "a", "feed").DataReceivers()["d"])
	fromC := subscribe(t, importFeed(t, rs[1], "c", "feed").DataReceivers()["d"])
	rs[0].Unexport("feed")
	eventually(t, "unexport closing the edge's data", wait, func() bool { _, closed := fromA.got(); return closed })
	rs[1].PeerGone("c")
	eventually(t, "the link's end closing the edge's data", wait, func() bool { _, closed := fromC.got(); return closed })
}

// A plain RTP link has no SCTP: the media crosses, the data stays at the origin.
func TestPlainLinkCarriesNoData(t *testing.T) {
	rs := newRelaysWith(t, withTransport("rtp"), "a", "b")
	data := originDataFeed(t, rs[0], "feed")
	imp := importFeed(t, rs[1], "a", "feed")
	if len(imp.DataReceivers()) != 0 || imp.Receivers()["v"] == nil {
		t.Fatalf("plain import: data %v, media %v", imp.DataReceivers(), imp.Receivers())
	}
	if data.Stats().Sinks != 0 {
		t.Fatal("the origin sends data on a plain link")
	}
	rs[0].mu.Lock()
	err := rs[0].checkDataChannels(rs[0].links["b"], rs[0].exports["feed"], map[string]uint16{"d": 17})
	rs[0].mu.Unlock()
	if !errors.Is(err, ErrBadDescriptor) {
		t.Fatalf("data channels asked on a plain link: %v", err)
	}
}

func TestBadDataChannelsRefused(t *testing.T) {
	rs := newRelays(t, "a", "b")
	originDataFeed(t, rs[0], "feed")
	imp := importFeed(t, rs[1], "a", "feed")
	used := imp.shared.data[0].id
	if !ownsDataChannel("b", "a", used) || ownsDataChannel("a", "b", used) {
		t.Fatalf("b picked channel %d", used)
	}
	for _, c := range []struct {
		name string
		ids  map[string]uint16
		want error
	}{
		{"a channel the link already carries", map[string]uint16{"d": used}, ErrSSRCCollision},
		{"a channel of the other node's half", map[string]uint16{"d": 18}, ErrSSRCCollision},
		{"a channel of the link's own", map[string]uint16{"d": 1}, ErrSSRCCollision},
		{"the reserved id", map[string]uint16{"d": 0xffff}, ErrSSRCCollision},
		{"a media stream's mid", map[string]uint16{"v": 19}, ErrBadDescriptor},
		{"a mid the feed does not have", map[string]uint16{"x": 19}, ErrBadDescriptor},
	} {
		rs[0].mu.Lock()
		err := rs[0].checkDataChannels(rs[0].links["b"], rs[0].exports["feed"], c.ids)
		rs[0].mu.Unlock()
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if err := rs[0].Export("bad", []Stream{{Mid: "d", Data: sfu.NewDataReceiver(false), Receiver: sfu.NewReceiver(sfu.ReceiverConfig{Codec: media.CodecVP8}, nil)}}); !errors.Is(err, ErrBadDescriptor) {
		t.Errorf("a stream with media and data: %v", err)
	}
}

// A link that cannot keep up never holds the publisher back: the origin's queue for the link is
// bounded, what does not fit is dropped and counted, and a local subscriber gets every message.
func TestSlowLinkDropsData(t *testing.T) {
	rs := newRelaysWith(t, func(c *Config) {
		// One message in flight on the link at a time, and a queue of 8 behind it.
		c.Data = sfu.DataSinkConfig{QueueMessages: 8, QueueBytes: 1 << 20, BufferedHigh: 1}
	}, "a", "b")
	data := originDataFeed(t, rs[0], "feed")
	local := subscribe(t, data)
	edge := subscribe(t, importFeed(t, rs[1], "a", "feed").DataReceivers()["d"])
	const n = 500
	msg := make([]byte, 10<<10)
	for range n {
		data.Write(msg, true)
	}
	if got, _ := local.got(); len(got) != n {
		t.Fatalf("the local subscriber got %d of %d messages", len(got), n)
	}
	eventually(t, "the origin's queue for the link drained", wait, func() bool {
		st := rs[0].Stats()
		return st.DataSent+st.DataDropped == n
	})
	st := rs[0].Stats()
	// At least the queue's worth crosses (one more when the first message found the channel open
	// and went at once).
	if st.DataDropped == 0 || st.DataSent < 8 {
		t.Fatalf("origin sent %d and dropped %d of %d messages", st.DataSent, st.DataDropped, n)
	}
	eventually(t, "what the origin sent reaching the edge", wait, func() bool { got, _ := edge.got(); return uint64(len(got)) == st.DataSent })
}

// The ids an edge picks stay in its half, above the link's own channel, and go round before
// 65535, skipping those in use; once all are, the next import's data is refused.
func TestDataChannelIDs(t *testing.T) {
	rs := newRelays(t, "a", "b")
	for _, r := range rs {
		peer := map[string]string{"a": "b", "b": "a"}[r.cfg.NodeID]
		held, err := r.allocDataChannel(peer)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[uint16]bool{held: true}
		for range 70000 {
			id, err := r.allocDataChannel(peer)
			if err != nil || id == held || !ownsDataChannel(r.cfg.NodeID, peer, id) {
				t.Fatalf("%s picked %d (%v), not its own or in use", r.cfg.NodeID, id, err)
			}
			seen[id] = true
			r.freeDataChannel(peer, id)
		}
		owned := 0
		for id := range 0x10000 {
			if ownsDataChannel(r.cfg.NodeID, peer, uint16(id)) {
				owned++
			}
		}
		if len(seen) != owned {
			t.Fatalf("%s picked %d different ids of the %d it owns", r.cfg.NodeID, len(seen), owned)
		}
		for range owned - 1 {
			if _, err := r.allocDataChannel(peer); err != nil {
				t.Fatal(err)
			}
		}
		if id, err := r.allocDataChannel(peer); err == nil {
			t.Fatalf("%s picked %d with every id in use", r.cfg.NodeID, id)
		}
	}
}
