package sfu

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/peer/peertest"
)

// dataPair is a server-side data channel (strata's end, wrapped in a sink) and the client that
// receives on it, over two real Pion PeerConnections on loopback.
type dataPair struct {
	sink *DataSink
	got  chan webrtc.DataChannelMessage
}

// connectDataPair opens a channel from a server PeerConnection to a client one; onMsg, when set,
// handles the client's messages instead of collecting them (a slow client blocks in it).
func connectDataPair(t *testing.T, cfg DataSinkConfig, onMsg func(webrtc.DataChannelMessage)) *dataPair {
	t.Helper()
	api := peertest.BrowserAPI(t)
	srv, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close(); _ = srv.Close() })
	dc, err := srv.CreateDataChannel("feed", nil)
	if err != nil {
		t.Fatal(err)
	}
	pair := &dataPair{sink: NewPionDataSink(dc, cfg), got: make(chan webrtc.DataChannelMessage, 100000)}
	cli.OnDataChannel(func(d *webrtc.DataChannel) {
		d.OnMessage(func(m webrtc.DataChannelMessage) {
			if onMsg != nil {
				onMsg(m)
				return
			}
			pair.got <- m
		})
	})
	signalPair(t, srv, cli)
	return pair
}

func signalPair(t *testing.T, offerer, answerer *webrtc.PeerConnection) {
	t.Helper()
	offer, err := offerer.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	done := webrtc.GatheringCompletePromise(offerer)
	if err := offerer.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := answerer.SetRemoteDescription(*offerer.LocalDescription()); err != nil {
		t.Fatal(err)
	}
	answer, err := answerer.CreateAnswer(nil)
	if err != nil {
		t.Fatal(err)
	}
	done = webrtc.GatheringCompletePromise(answerer)
	if err := answerer.SetLocalDescription(answer); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := offerer.SetRemoteDescription(*answerer.LocalDescription()); err != nil {
		t.Fatal(err)
	}
}

func dataPayload(i, size int) []byte {
	b := bytes.Repeat([]byte{'x'}, size)
	copy(b, fmt.Sprintf("%08d", i))
	return b
}

// TestDataFanoutSlowSinkDoesNotStallOthers: one client never returns from its message handler, so
// its SCTP receive window fills; the receiver's writes never block, the other clients receive
// every message in order (text and binary as sent), and the slow sink counts what it dropped.
func TestDataFanoutSlowSinkDoesNotStallOthers(t *testing.T) {
	cfg := DefaultDataSinkConfig()
	recv := NewDataReceiver(false)
	release := make(chan struct{})
	var slowOnce sync.Once
	slowStarted := make(chan struct{})
	slow := connectDataPair(t, cfg, func(webrtc.DataChannelMessage) {
		slowOnce.Do(func() { close(slowStarted) })
		<-release
	})
	defer close(release)
	fast := []*dataPair{connectDataPair(t, cfg, nil), connectDataPair(t, cfg, nil)}
	for _, p := range append(fast, slow) {
		if !recv.AddSink(p.sink) {
			t.Fatal("AddSink refused on an open receiver")
		}
	}
	const n, size = 4000, 1000 // 4 MB: more than the slow client's SCTP window, send buffer and queue together
	start := time.Now()
	for i := range n {
		recv.Write(dataPayload(i, size), i%2 == 1)
		// The publisher's pace is what the fast clients take (however slow this machine is right
		// now): the slow one has no say in it.
		for _, p := range fast {
			for i-len(p.got) > 200 {
				time.Sleep(time.Millisecond)
			}
		}
	}
	t.Logf("%d writes took %v", n, time.Since(start))
	for k, p := range fast {
		for i := range n {
			select {
			case m := <-p.got:
				if want := dataPayload(i, size); !bytes.Equal(m.Data, want) || m.IsString != (i%2 == 0) {
					t.Fatalf("client %d message %d: got %q... string=%v", k, i, m.Data[:8], m.IsString)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("client %d got %d of %d messages; sink %+v", k, i, n, p.sink.Stats())
			}
		}
		if st := p.sink.Stats(); st.Dropped != 0 || st.Messages != n {
			t.Errorf("fast client %d: %+v", k, st)
		}
	}
	<-slowStarted
	st := slow.sink.Stats()
	if st.Dropped == 0 || st.Messages+st.Dropped+uint64(st.Queued) != n {
		t.Errorf("slow client: %+v (want drops, and sent+dropped+queued = %d)", st, n)
	}
	if st.Queued > cfg.QueueMessages {
		t.Errorf("slow client queues %d messages, bound %d", st.Queued, cfg.QueueMessages)
	}
	t.Logf("slow sink: %+v", st)
	if rs := recv.Stats(); rs.Messages != n || rs.Bytes != n*size {
		t.Errorf("receiver stats %+v", rs)
	}
}

// TestDataSinkQueuesUntilOpen: messages written before the channel opens arrive once it does, in
// order; closing the receiver closes the client's channel.
func TestDataSinkQueuesUntilOpen(t *testing.T) {
	recv := NewDataReceiver(false)
	api := peertest.BrowserAPI(t)
	srv, _ := api.NewPeerConnection(webrtc.Configuration{})
	cli, _ := api.NewPeerConnection(webrtc.Configuration{})
	t.Cleanup(func() { _ = cli.Close(); _ = srv.Close() })
	dc, err := srv.CreateDataChannel("7", nil)
	if err != nil {
		t.Fatal(err)
	}
	sink := NewPionDataSink(dc, DefaultDataSinkConfig())
	recv.AddSink(sink)
	for i := range 10 {
		recv.Write([]byte(fmt.Sprint("early ", i)), false)
	}
	got := make(chan string, 100)
	closed := make(chan struct{})
	var label string
	var mu sync.Mutex
	cli.OnDataChannel(func(d *webrtc.DataChannel) {
		mu.Lock()
		label = d.Label()
		mu.Unlock()
		d.OnMessage(func(m webrtc.DataChannelMessage) { got <- string(m.Data) })
		d.OnClose(func() { close(closed) })
	})
	signalPair(t, srv, cli)
	for i := range 10 {
		select {
		case m := <-got:
			if m != fmt.Sprint("early ", i) {
				t.Fatalf("message %d: %q", i, m)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("got %d of 10 queued messages", i)
		}
	}
	mu.Lock()
	if label != "7" {
		t.Errorf("label %q, want 7", label)
	}
	mu.Unlock()
	recv.Close()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the client's channel did not close with the receiver")
	}
	if recv.AddSink(NewDataSink(discardChannel{}, DefaultDataSinkConfig())) {
		t.Error("AddSink accepted on a closed receiver")
	}
}

// stuckChannel is a channel whose send buffer never drains: it shows the queue bounds exactly.
type stuckChannel struct{ buffered uint64 }

func (c *stuckChannel) Send(msg []byte, _ bool) error { c.buffered += uint64(len(msg)); return nil }
func (c *stuckChannel) BufferedAmount() uint64        { return c.buffered }
func (c *stuckChannel) Close() error                  { return nil }

func TestDataSinkBounds(t *testing.T) {
	ch := &stuckChannel{}
	s := NewDataSink(ch, DataSinkConfig{QueueMessages: 4, QueueBytes: 250, BufferedHigh: 100})
	s.Opened()
	recv := NewDataReceiver(true)
	recv.AddSink(s)
	for range 10 {
		recv.Write(make([]byte, 60), true)
	}
	// 2 sent (buffer 0 then 60 < 100), 4 queued is 240 bytes (a fifth would pass 250), 4 dropped.
	if st := s.Stats(); st.Messages != 2 || st.Queued != 4 || st.Dropped != 4 {
		t.Fatalf("stats %+v", st)
	}
	ch.buffered = 0
	s.Drain()
	if st := s.Stats(); st.Messages != 4 || st.Queued != 2 {
		t.Fatalf("after one drain: %+v", st)
	}
	late := NewDataSink(&stuckChannel{}, DefaultDataSinkConfig())
	late.Opened()
	recv.AddSink(late) // keepLast: gets the latest message at once
	if st := late.Stats(); st.Messages != 1 {
		t.Fatalf("new sink of a keep-last receiver: %+v", st)
	}
	recv.Close()
	if st := s.Stats(); st.Queued != 0 || st.Dropped != 6 {
		t.Fatalf("after close: %+v", st)
	}
}

// discardChannel is an always-open channel with an empty send buffer: the benchmark measures the
// fan-out itself, not SCTP.
type discardChannel struct{}

func (discardChannel) Send([]byte, bool) error { return nil }
func (discardChannel) BufferedAmount() uint64  { return 0 }
func (discardChannel) Close() error            { return nil }

// BenchmarkDataFanout is one 1 KB message from a publisher to n subscribers' sinks: the pooled copy,
// then per sink the send decision and Send (a channel with room). ns/op is per published message.
func BenchmarkDataFanout(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			recv := NewDataReceiver(false)
			for range n {
				s := NewDataSink(discardChannel{}, DefaultDataSinkConfig())
				s.Opened()
				recv.AddSink(s)
			}
			msg := bytes.Repeat([]byte{'m'}, 1000)
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				recv.Write(msg, false)
			}
		})
	}
}
