package peer

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/peer/peertest"
)

// memoryPairs is how many connections each measurement holds at once.
const memoryPairs = 16

// BenchmarkPeerConnectionMemory measures what one connected PeerConnection holds: memoryPairs
// strata Peers (the media configuration's defaults, on loopback) each answer a Pion client that
// sends them a second of audio and video, and the live heap plus goroutine stacks grow by so much
// per pair. The same is measured for pairs of two plain Pion clients, half of which is one
// client's share, so strata's side of a pair is the pair less that share. Metrics per strata
// PeerConnection (heapB/PC, stackB/PC, goroutines/PC) and per plain Pion client (…/client).
//
//	nice -n 19 go test ./internal/peer -run '^$' -bench PeerConnectionMemory -benchtime 1x
func BenchmarkPeerConnectionMemory(b *testing.B) {
	f := newTestFactory(b, testMedia())
	var pc, client footprint
	for b.Loop() {
		clientPair := measurePairs(b, func() connectedPair { return clientToClient(b) })
		strataPair := measurePairs(b, func() connectedPair { return clientToPeer(b, f) })
		client = client.plus(clientPair.times(0.5))
		pc = pc.plus(strataPair.plus(clientPair.times(-0.5)))
	}
	pc, client = pc.times(1/float64(b.N)), client.times(1/float64(b.N))
	b.ReportMetric(pc.heap, "heapB/PC")
	b.ReportMetric(pc.stack, "stackB/PC")
	b.ReportMetric(pc.goroutines, "goroutines/PC")
	b.ReportMetric(client.heap, "heapB/client")
	b.ReportMetric(client.stack, "stackB/client")
	b.ReportMetric(client.goroutines, "goroutines/client")
}

// footprint is memory and goroutines held, per connection or per end.
type footprint struct{ heap, stack, goroutines float64 }

func (a footprint) plus(b footprint) footprint {
	return footprint{a.heap + b.heap, a.stack + b.stack, a.goroutines + b.goroutines}
}

func (a footprint) times(k float64) footprint {
	return footprint{a.heap * k, a.stack * k, a.goroutines * k}
}

// connectedPair is one connection (two ends, in this process), the tracks its client sends on,
// and how to close it.
type connectedPair struct {
	tracks [2]*webrtc.TrackLocalStaticRTP
	close  func()
}

// measurePairs opens memoryPairs connections with open, and returns the live heap, goroutine
// stacks and goroutines they added per connection.
func measurePairs(b *testing.B, open func() connectedPair) footprint {
	b.Helper()
	before := inUse()
	pairs := make([]connectedPair, memoryPairs)
	for i := range pairs {
		pairs[i] = open()
	}
	var sending sync.WaitGroup
	for _, p := range pairs {
		sending.Go(func() { sendSecondOfMedia(p.tracks) })
	}
	sending.Wait()
	time.Sleep(300 * time.Millisecond) // feedback, reports and their timers settle
	after := inUse()
	for _, p := range pairs {
		p.close()
	}
	time.Sleep(200 * time.Millisecond) // goroutines of closed connections end
	return after.plus(before.times(-1)).times(1.0 / memoryPairs)
}

// inUse is the heap live after a collection, the goroutine stacks, and the goroutines.
func inUse() footprint {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return footprint{float64(ms.HeapAlloc), float64(ms.StackInuse), float64(runtime.NumGoroutine())}
}

// clientToPeer connects a Pion client sending audio and video to a strata Peer that reads both.
func clientToPeer(b *testing.B, f *Factory) connectedPair {
	b.Helper()
	up := make(chan struct{}, 1)
	srv, err := f.New(Hooks{OnUp: func() { up <- struct{}{} }})
	if err != nil {
		b.Fatal(err)
	}
	srv.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) { go drain(tr) })
	c, tracks := sendingMediaClient(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	answer, err := srv.Answer(ctx, gatheredOffer(b, c))
	if err != nil {
		b.Fatal(err)
	}
	if err := c.SetRemoteDescription(answer); err != nil {
		b.Fatal(err)
	}
	select {
	case <-up:
	case <-time.After(10 * time.Second):
		b.Fatal("the strata Peer did not come up")
	}
	return connectedPair{tracks: tracks, close: func() { srv.Close("bench over"); _ = c.Close() }}
}

// clientToClient connects a Pion client sending audio and video to another that reads both.
func clientToClient(b *testing.B) connectedPair {
	b.Helper()
	c, tracks := sendingMediaClient(b)
	other, err := peertest.BrowserAPI(b).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		b.Fatal(err)
	}
	other.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) { go drain(tr) })
	up := make(chan struct{}, 1)
	other.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		if s == webrtc.PeerConnectionStateConnected {
			up <- struct{}{}
		}
	})
	if err := other.SetRemoteDescription(gatheredOffer(b, c)); err != nil {
		b.Fatal(err)
	}
	answer, err := other.CreateAnswer(nil)
	if err != nil {
		b.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(other)
	if err := other.SetLocalDescription(answer); err != nil {
		b.Fatal(err)
	}
	<-gathered
	if err := c.SetRemoteDescription(*other.LocalDescription()); err != nil {
		b.Fatal(err)
	}
	select {
	case <-up:
	case <-time.After(10 * time.Second):
		b.Fatal("the client pair did not connect")
	}
	return connectedPair{tracks: tracks, close: func() { _ = other.Close(); _ = c.Close() }}
}

// sendingMediaClient is a Pion client with an Opus and a VP8 track to send.
func sendingMediaClient(b *testing.B) (*webrtc.PeerConnection, [2]*webrtc.TrackLocalStaticRTP) {
	b.Helper()
	pc, err := peertest.BrowserAPI(b).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		b.Fatal(err)
	}
	var tracks [2]*webrtc.TrackLocalStaticRTP
	for i, codec := range []webrtc.RTPCodecCapability{
		{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2},
		{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000},
	} {
		if tracks[i], err = webrtc.NewTrackLocalStaticRTP(codec, codec.MimeType, "client"); err != nil {
			b.Fatal(err)
		}
		s, err := pc.AddTrack(tracks[i])
		if err != nil {
			b.Fatal(err)
		}
		go drainRTCP(s)
	}
	return pc, tracks
}

// gatheredOffer is c's offer with all its candidates (half trickle).
func gatheredOffer(b *testing.B, c *webrtc.PeerConnection) webrtc.SessionDescription {
	b.Helper()
	o, err := c.CreateOffer(nil)
	if err != nil {
		b.Fatal(err)
	}
	done := webrtc.GatheringCompletePromise(c)
	if err := c.SetLocalDescription(o); err != nil {
		b.Fatal(err)
	}
	<-done
	return *c.LocalDescription()
}

// sendSecondOfMedia sends a second of media on the tracks, at its pace: an audio packet of 100
// bytes every 20 ms, and 5 video packets of 1100 bytes every 50 ms (880 kbit/s).
func sendSecondOfMedia(tracks [2]*webrtc.TrackLocalStaticRTP) {
	audio, video := make([]byte, 100), make([]byte, 1100)
	var audioSeq, videoSeq uint16
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for i := range 100 {
		<-tick.C
		if i%2 == 0 {
			_ = tracks[0].WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: audioSeq, Timestamp: uint32(i) * 480}, Payload: audio})
			audioSeq++
		}
		if i%5 == 0 {
			for k := range 5 {
				_ = tracks[1].WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: videoSeq, Timestamp: uint32(i) * 900, Marker: k == 4}, Payload: video})
				videoSeq++
			}
		}
	}
}
