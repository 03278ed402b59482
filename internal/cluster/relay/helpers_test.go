package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/sfu"
)

type handler = func(ctx context.Context, from string, req json.RawMessage) (any, error)

// testNet connects the Relays of one test: Call runs the other node's handler directly, with the
// request and answer through JSON as over the cluster listener.
type testNet struct {
	mu       sync.Mutex
	handlers map[string]map[string]handler
}

type testSignal struct {
	net  *testNet
	node string
}

func (s testSignal) Handle(path string, f handler) {
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	if s.net.handlers[s.node] == nil {
		s.net.handlers[s.node] = map[string]handler{}
	}
	s.net.handlers[s.node][path] = f
}

func (s testSignal) Call(ctx context.Context, node, path string, req, resp any) error {
	s.net.mu.Lock()
	h := s.net.handlers[node][path]
	s.net.mu.Unlock()
	if h == nil {
		return fmt.Errorf("test: node %s has no handler of %s", node, path)
	}
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	out, err := h(ctx, s.node, b)
	if err != nil {
		return err
	}
	if resp == nil {
		return nil
	}
	ob, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return json.Unmarshal(ob, resp)
}

// newRelays starts one Relay per node id on loopback, closed at the end of the test.
func newRelays(t testing.TB, nodes ...string) []*Relay {
	return newRelaysWith(t, func(*Config) {}, nodes...)
}

func newRelaysWith(t testing.TB, adjust func(*Config), nodes ...string) []*Relay {
	t.Helper()
	n := &testNet{handlers: map[string]map[string]handler{}}
	var out []*Relay
	for _, id := range nodes {
		out = append(out, n.join(t, id, adjust))
	}
	return out
}

// join starts a Relay for node id on the net (a node joining, or restarting under its id: its
// handlers replace the earlier run's).
func (n *testNet) join(t testing.TB, id string, adjust func(*Config)) *Relay {
	t.Helper()
	cfg := Config{NodeID: id, Address: "127.0.0.1", FailedTimeout: time.Second, ConnectTimeout: 5 * time.Second, NACKInterval: 10 * time.Millisecond}
	adjust(&cfg)
	r, err := New(cfg, testSignal{n, id})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// vp8Source makes VP8 packets of up to three simulcast layers, two packets per frame, temporal
// layers 0-2-1-2, a keyframe on a layer when asked (or every keyEvery frames).
type vp8Source struct {
	mu         sync.Mutex
	layers     int
	frame      int
	keyEvery   int
	seq        [3]uint16
	ts         [3]uint32
	pic        [3]uint16
	tl0        [3]uint8
	keyPending [3]bool
	asked      [3]atomic.Int64 // keyframe requests that reached the publisher, per layer
	// deaf: the publisher counts keyframe requests but sends no keyframe for them.
	deaf bool
}

func newVP8Source(layers int) *vp8Source {
	return &vp8Source{layers: layers, keyEvery: 30, seq: [3]uint16{100, 30000, 65500}, ts: [3]uint32{1, 1 << 31, 4e9}, keyPending: [3]bool{true, true, true}}
}

// requester is the origin Receiver's keyframe requester: the publisher's side of a PLI.
func (s *vp8Source) requester(layer int, _ uint32) {
	s.asked[layer].Add(1)
	s.mu.Lock()
	s.keyPending[layer] = s.keyPending[layer] || !s.deaf
	s.mu.Unlock()
}

// frameTo writes the next frame of every layer into recv.
func (s *vp8Source) frameTo(recv *sfu.Receiver) int {
	s.mu.Lock()
	var pkts [3][2][]byte
	for l := 0; l < s.layers; l++ {
		tid := []uint8{0, 2, 1, 2}[s.frame%4]
		key := s.keyEvery > 0 && s.frame%s.keyEvery == 0 || s.keyPending[l]
		if key {
			s.keyPending[l], tid = false, 0
		}
		if tid == 0 && s.frame > 0 {
			s.tl0[l]++
		}
		for k := range 2 {
			pkts[l][k] = vp8Packet(s.seq[l], s.ts[l], s.pic[l], s.tl0[l], tid, key, k == 0, k == 1, uint32(l+1)*1000, 100*(l+1))
			s.seq[l]++
		}
		s.ts[l] += 3000
		s.pic[l] = (s.pic[l] + 1) & 0x7fff
	}
	s.frame++
	s.mu.Unlock()
	n := 0
	for l := 0; l < s.layers; l++ {
		for k := range 2 {
			recv.WriteRTP(l, pkts[l][k], sfu.Now())
			n++
		}
	}
	return n
}

// vp8Packet is an RTP packet (payload type 96) with a VP8 descriptor: 15-bit picture id,
// TL0PICIDX, TID; body bytes of payload, the last naming the layer.
func vp8Packet(seq uint16, ts uint32, pic uint16, tl0, tid uint8, key, start, marker bool, ssrc uint32, body int) []byte {
	m := byte(0)
	if marker {
		m = 0x80
	}
	b := []byte{0x80, m | 96, byte(seq >> 8), byte(seq), byte(ts >> 24), byte(ts >> 16), byte(ts >> 8), byte(ts),
		byte(ssrc >> 24), byte(ssrc >> 16), byte(ssrc >> 8), byte(ssrc)}
	d0 := byte(0x80)
	if start {
		d0 |= 0x10
	}
	y := byte(0)
	if tid > 0 {
		y = 0x20
	}
	b = append(b, d0, 0xE0, 0x80|byte(pic>>8), byte(pic), tl0, tid<<6|y)
	if start {
		if key {
			b = append(b, 0)
		} else {
			b = append(b, 1)
		}
	}
	return append(b, make([]byte, body)...)
}

// pump writes frames into recv every 5 ms until the test ends; it returns how many packets it
// wrote so far.
func pump(t testing.TB, src *vp8Source, recv *sfu.Receiver) func() int64 {
	var n atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				n.Add(int64(src.frameTo(recv)))
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return n.Load
}

// layerSink counts what a Receiver delivers per layer and keeps the sequence numbers it saw.
type layerSink struct {
	mu      sync.Mutex
	packets [3]int
	seqs    [3]map[uint16]bool
}

func newLayerSink() *layerSink {
	return &layerSink{seqs: [3]map[uint16]bool{{}, {}, {}}}
}

func (s *layerSink) WriteRTP(p *sfu.Packet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.Layer < 3 {
		s.packets[p.Layer]++
		s.seqs[p.Layer][p.Header.Seq] = true
	}
}
func (s *layerSink) Resync() {}

func (s *layerSink) count(layer int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.packets[layer]
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// vp8Stream is the descriptor-side description of a VP8 simulcast stream of recv.
func vp8Stream(recv *sfu.Receiver, layers int) Stream {
	return Stream{Mid: "v", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, PayloadType: 96,
		Simulcast: layers > 1, Layers: layers, Receiver: recv}
}

// binding is the subscriber's side of a bound DownTrack on the edge: it counts what is written.
type binding struct {
	packets atomic.Int64
}

func (b *binding) CodecParameters() []webrtc.RTPCodecParameters {
	return []webrtc.RTPCodecParameters{{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, PayloadType: 96}}
}
func (b *binding) HeaderExtensions() []webrtc.RTPHeaderExtensionParameter { return nil }
func (b *binding) SSRC() webrtc.SSRC                                      { return 4242 }
func (b *binding) SSRCRetransmission() webrtc.SSRC                        { return 0 }
func (b *binding) SSRCForwardErrorCorrection() webrtc.SSRC                { return 0 }
func (b *binding) WriteStream() webrtc.TrackLocalWriter                   { return b }
func (b *binding) ID() string                                             { return "sub" }
func (b *binding) RTCPReader() interceptor.RTCPReader                     { return nil }
func (b *binding) WriteRTP(h *rtp.Header, payload []byte) (int, error) {
	b.packets.Add(1)
	return len(payload), nil
}
func (b *binding) Write(p []byte) (int, error) { return len(p), nil }
