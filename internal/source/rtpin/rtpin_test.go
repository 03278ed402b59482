package rtpin

import (
	"encoding/binary"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/rtcp"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
)

// countSink counts the packets a receiver delivers, per layer.
type countSink struct {
	layers [3]atomic.Int64
	ssrc   atomic.Uint32
}

func (c *countSink) WriteRTP(p *sfu.Packet) {
	c.layers[p.Layer].Add(1)
	c.ssrc.Store(p.Header.SSRC)
}
func (c *countSink) Resync() {}

// vp8Packet is a VP8 RTP packet (keyframe start when key).
func vp8Packet(b []byte, seq uint16, ssrc uint32, key bool) []byte {
	b = b[:12+4]
	b[0], b[1] = 0x80, 100|0x80
	binary.BigEndian.PutUint16(b[2:], seq)
	binary.BigEndian.PutUint32(b[4:], uint32(seq)*3000)
	binary.BigEndian.PutUint32(b[8:], ssrc)
	b[12] = 0x10 // S=1, PID 0
	b[13] = 0x01 // P=1: interframe
	if key {
		b[13] = 0x00
	}
	b[14], b[15] = 0x9d, 0x01
	return b
}

func opusPacket(b []byte, seq uint16, ssrc uint32) []byte {
	b = b[:12+3]
	b[0], b[1] = 0x80, 111
	binary.BigEndian.PutUint16(b[2:], seq)
	binary.BigEndian.PutUint32(b[4:], uint32(seq)*960)
	binary.BigEndian.PutUint32(b[8:], ssrc)
	b[12], b[13], b[14] = 0xfc, 0xff, 0xfe
	return b
}

func sender(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func to(port int) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func openTest(t *testing.T, cfg Config) *Source {
	t.Helper()
	s, err := Open(cfg, sfu.ReceiverConfig{KeyframeInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestStreams: audio, simulcast video and data on ports the source picks; each layer's packets
// reach the receiver on its layer, each datagram of the data port is one message.
func TestStreams(t *testing.T) {
	s := openTest(t, Config{ID: "t", Host: "127.0.0.1", Streams: []Stream{
		{Kind: source.Audio, MID: "a", Codec: media.CodecOpus, PT: 111},
		{Kind: source.Video, MID: "v", Codec: media.CodecVP8, PT: 100, Simulcast: true, RTCP: true},
		{Kind: source.Data, MID: "d", TextData: true, BufferMsg: true},
	}})
	ports := s.Ports()
	if len(ports) != 3 || ports[0].Port == 0 || ports[0].Port2 != 0 || ports[1].Port3 == 0 || ports[1].RTCP == 0 || ports[2].Port == 0 {
		t.Fatalf("ports %+v", ports)
	}
	tr := s.Tracks()
	if len(tr) != 3 || tr[0].Recv == nil || tr[1].Recv == nil || tr[2].Recv != nil || tr[2].Kind != source.Data || !tr[1].Recv.Config().Simulcast {
		t.Fatalf("tracks %+v", tr)
	}
	audio, video := &countSink{}, &countSink{}
	tr[0].Recv.AddSink(audio)
	tr[1].Recv.AddSink(video)
	var msgs atomic.Int64
	var lastText atomic.Bool
	sink := sfu.NewDataSink(funcChannel(func(msg []byte, binary bool) {
		if string(msg) == "hello" {
			msgs.Add(1)
			lastText.Store(!binary)
		}
	}), sfu.DefaultDataSinkConfig())
	sink.Opened()
	s.Data("d").Receiver().AddSink(sink)
	defer s.Data("d").Receiver().RemoveSink(sink)
	c := sender(t)
	buf := make([]byte, 64)
	for i := range 10 {
		_, _ = c.WriteToUDPAddrPort(opusPacket(buf, uint16(i), 11), to(ports[0].Port))
		for l, p := range []int{ports[1].Port, ports[1].Port2, ports[1].Port3} {
			_, _ = c.WriteToUDPAddrPort(vp8Packet(buf, uint16(i), uint32(20+l), i == 0), to(p))
		}
	}
	_, _ = c.WriteToUDPAddrPort([]byte("hello"), to(ports[2].Port))
	waitFor(t, "packets", func() bool {
		return audio.layers[0].Load() == 10 && video.layers[0].Load() == 10 && video.layers[1].Load() == 10 &&
			video.layers[2].Load() == 10 && msgs.Load() == 1
	})
	if !lastText.Load() {
		t.Error("text data delivered as binary")
	}
	if got := tr[1].Recv.LayerSSRC(2); got != 22 {
		t.Errorf("layer 2 SSRC %d, want 22", got)
	}
	// buffermsg: a new subscriber gets the last message at once.
	var late atomic.Int64
	lateSink := sfu.NewDataSink(funcChannel(func([]byte, bool) { late.Add(1) }), sfu.DefaultDataSinkConfig())
	lateSink.Opened()
	s.Data("d").Receiver().AddSink(lateSink)
	if late.Load() != 1 {
		t.Errorf("a late subscriber got %d buffered messages, want 1", late.Load())
	}
	if st, _ := s.Stats("d"); st.Messages != 1 {
		t.Errorf("data stats %+v", st)
	}
}

// TestMalformedCounted: garbage on an RTP port is counted by the receiver and dropped; the port
// keeps serving.
func TestMalformedCounted(t *testing.T) {
	s := openTest(t, Config{Host: "127.0.0.1", Streams: []Stream{{Kind: source.Video, MID: "v", Codec: media.CodecVP8, PT: 100}}})
	recv := s.Tracks()[0].Recv
	sink := &countSink{}
	recv.AddSink(sink)
	c := sender(t)
	port := s.Ports()[0].Port
	for _, junk := range [][]byte{{1, 2, 3}, make([]byte, 11), {0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}} {
		_, _ = c.WriteToUDPAddrPort(junk, to(port))
	}
	buf := make([]byte, 64)
	_, _ = c.WriteToUDPAddrPort(vp8Packet(buf, 1, 5, true), to(port))
	waitFor(t, "the valid packet", func() bool { return sink.layers[0].Load() == 1 })
	if st := recv.Stats(); st.MalformedRTP != 3 || st.Packets != 1 {
		t.Errorf("stats %+v, want 3 malformed and 1 packet", st)
	}
}

// TestKeyframeRequest: once the source's RTCP has arrived, a keyframe request goes back to its
// address as a PLI and a FIR for the layer's SSRC; before, it is counted as unsent.
func TestKeyframeRequest(t *testing.T) {
	s := openTest(t, Config{Host: "127.0.0.1", Streams: []Stream{{Kind: source.Video, MID: "v", Codec: media.CodecVP8, PT: 100, RTCP: true}}})
	recv := s.Tracks()[0].Recv
	rtpc, rtcpc := sender(t), sender(t)
	buf := make([]byte, 64)
	ports := s.Ports()[0]
	_, _ = rtpc.WriteToUDPAddrPort(vp8Packet(buf, 1, 0xabcd, true), to(ports.Port))
	waitFor(t, "the first packet", func() bool { return recv.Stats().Packets == 1 })
	recv.RequestKeyframe(0, sfu.Now())
	if st, _ := s.Stats("v"); st.KeyframeRequestsUnsent != 1 {
		t.Fatalf("stats %+v, want one unsent request", st)
	}
	sr, _ := (&rtcp.SenderReport{SSRC: 0xabcd}).Marshal()
	_, _ = rtcpc.WriteToUDPAddrPort(sr, to(ports.RTCP))
	waitFor(t, "the sender report", func() bool { st, _ := s.Stats("v"); return st.RTCPReceived == 1 })
	time.Sleep(2 * time.Millisecond) // past the receiver's KeyframeInterval
	if !recv.RequestKeyframe(0, sfu.Now()) {
		t.Fatal("request not made")
	}
	_ = rtcpc.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := rtcpc.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	pkts, err := rtcp.Unmarshal(buf[:n])
	if err != nil || len(pkts) != 2 {
		t.Fatalf("%v %v", pkts, err)
	}
	pli, ok1 := pkts[0].(*rtcp.PictureLossIndication)
	fir, ok2 := pkts[1].(*rtcp.FullIntraRequest)
	if !ok1 || !ok2 || pli.MediaSSRC != 0xabcd || len(fir.FIR) != 1 || fir.FIR[0].SSRC != 0xabcd {
		t.Fatalf("got %v", pkts)
	}
}

// TestSSRCChange: a sender that restarts with a new SSRC is followed: its packets are delivered
// and keyframe requests name it.
func TestSSRCChange(t *testing.T) {
	s := openTest(t, Config{Host: "127.0.0.1", Streams: []Stream{{Kind: source.Video, MID: "v", Codec: media.CodecVP8, PT: 100}}})
	recv := s.Tracks()[0].Recv
	sink := &countSink{}
	recv.AddSink(sink)
	c := sender(t)
	buf := make([]byte, 64)
	port := s.Ports()[0].Port
	_, _ = c.WriteToUDPAddrPort(vp8Packet(buf, 1, 7, true), to(port))
	_, _ = c.WriteToUDPAddrPort(vp8Packet(buf, 9000, 8, true), to(port))
	waitFor(t, "both packets", func() bool { return sink.layers[0].Load() == 2 })
	if recv.LayerSSRC(0) != 8 || sink.ssrc.Load() != 8 {
		t.Errorf("SSRC %d, want 8", recv.LayerSSRC(0))
	}
	if st, _ := s.Stats("v"); st.SSRCChanges != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestOpenErrors: a port in use, a bad host and an unknown interface fail Open, and nothing of
// the source stays bound.
func TestOpenErrors(t *testing.T) {
	busy := sender(t)
	busyPort := busy.LocalAddr().(*net.UDPAddr).Port
	free := sender(t)
	freePort := free.LocalAddr().(*net.UDPAddr).Port
	_ = free.Close()
	for name, cfg := range map[string]Config{
		"port in use": {Host: "127.0.0.1", Streams: []Stream{
			{Kind: source.Audio, MID: "a", Codec: media.CodecOpus, Port: freePort},
			{Kind: source.Video, MID: "v", Codec: media.CodecVP8, Port: busyPort},
		}},
		"bad host":  {Host: "300.1.1.1", Streams: []Stream{{Kind: source.Audio, MID: "a", Codec: media.CodecOpus}}},
		"no iface":  {Streams: []Stream{{Kind: source.Audio, MID: "a", Codec: media.CodecOpus, Iface: "nosuch0"}}},
		"bad mcast": {Streams: []Stream{{Kind: source.Audio, MID: "a", Codec: media.CodecOpus, Mcast: "10.0.0.1"}}},
		"none":      {},
	} {
		if _, err := Open(cfg, sfu.ReceiverConfig{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(to(freePort)))
	if err != nil {
		t.Fatalf("the first stream's port stayed bound after the failed Open: %v", err)
	}
	_ = c.Close()
}

// TestIface: a stream bound by interface name listens on that interface's address.
func TestIface(t *testing.T) {
	s := openTest(t, Config{Streams: []Stream{{Kind: source.Audio, MID: "a", Codec: media.CodecOpus, Iface: "lo"}}})
	addr := s.streams[0].conns[0].LocalAddr().(*net.UDPAddr)
	if !addr.IP.IsLoopback() {
		t.Errorf("bound to %v, want loopback", addr)
	}
}

// TestHandleAllocatesNothing: a packet's way from the socket buffer to a sink allocates nothing.
func TestHandleAllocatesNothing(t *testing.T) {
	s := openTest(t, Config{Host: "127.0.0.1", Streams: []Stream{{Kind: source.Video, MID: "v", Codec: media.CodecVP8, PT: 100}}})
	st := s.streams[0]
	st.recv.AddSink(&countSink{})
	buf := make([]byte, 64)
	var seq uint16
	from := to(1)
	allocs := testing.AllocsPerRun(1000, func() {
		seq++
		st.handle(0, vp8Packet(buf, seq, 3, seq%30 == 1), from, sfu.Now())
	})
	if allocs != 0 {
		t.Errorf("%v allocations per packet", allocs)
	}
}

// BenchmarkIngest: packets sent over loopback to a source's port until its sink has them all.
func BenchmarkIngest(b *testing.B) {
	s, err := Open(Config{Host: "127.0.0.1", Streams: []Stream{{Kind: source.Video, MID: "v", Codec: media.CodecVP8, PT: 100}}}, sfu.ReceiverConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sink := &countSink{}
	s.Tracks()[0].Recv.AddSink(sink)
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	dst := to(s.Ports()[0].Port)
	buf := make([]byte, 1200)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		pkt := vp8Packet(buf, uint16(i), 9, i%100 == 0)
		_, _ = c.WriteToUDPAddrPort(pkt[:cap(pkt)], dst)
		// Keep the socket buffer from overflowing: wait (a little) every 64 packets.
		if i%64 == 63 {
			for wait := 0; wait < 100 && sink.layers[0].Load()+int64(s.Tracks()[0].Recv.Stats().Duplicates) < int64(i-32); wait++ {
				time.Sleep(10 * time.Microsecond)
			}
		}
	}
}

// funcChannel is a data channel that hands each message to a function at once (always room).
type funcChannel func(msg []byte, binary bool)

func (f funcChannel) Send(msg []byte, binary bool) error { f(msg, binary); return nil }
func (funcChannel) BufferedAmount() uint64               { return 0 }
func (funcChannel) Close() error                         { return nil }
