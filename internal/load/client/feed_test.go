package client

import (
	"net"
	"testing"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/load/mediasrc"
)

func TestWantsKeyframe(t *testing.T) {
	marshal := func(pkts ...rtcp.Packet) []byte {
		b, err := rtcp.Marshal(pkts)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	rr := &rtcp.ReceiverReport{SSRC: 1}
	for _, c := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"pli", marshal(&rtcp.PictureLossIndication{SenderSSRC: 1, MediaSSRC: 2}), true},
		{"rr+pli", marshal(rr, &rtcp.PictureLossIndication{SenderSSRC: 1, MediaSSRC: 2}), true},
		{"rr+fir", marshal(rr, &rtcp.FullIntraRequest{SenderSSRC: 1, FIR: []rtcp.FIREntry{{SSRC: 2}}}), true},
		{"rr", marshal(rr), false},
		{"remb", marshal(&rtcp.ReceiverEstimatedMaximumBitrate{Bitrate: 1e6, SSRCs: []uint32{2}}), false},
		{"nack", marshal(&rtcp.TransportLayerNack{MediaSSRC: 2, Nacks: []rtcp.NackPair{{PacketID: 1}}}), false},
		{"truncated", marshal(rr, &rtcp.PictureLossIndication{})[:10], false},
		{"not rtcp", []byte{0, 1, 2, 3, 4, 5, 6, 7}, false},
		{"empty", nil, false},
	} {
		if got := WantsKeyframe(c.b); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func FuzzWantsKeyframe(f *testing.F) {
	pli, _ := rtcp.Marshal([]rtcp.Packet{&rtcp.ReceiverReport{SSRC: 1}, &rtcp.PictureLossIndication{MediaSSRC: 2}})
	f.Add(pli)
	f.Add([]byte{0x80, 201, 0, 1, 0, 0, 0, 1})
	f.Add([]byte{0x81, 206, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) { WantsKeyframe(b) })
}

// TestRTPConnAllocatesNothing holds the feed's send path (header rewrite, marshal, write) at
// zero allocations per packet.
func TestRTPConnAllocatesNothing(t *testing.T) {
	sink, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	w, err := dialRTP(net.IPv4(127, 0, 0, 1), sink.LocalAddr().(*net.UDPAddr).Port, 96)
	if err != nil {
		t.Fatal(err)
	}
	defer w.conn.Close()
	pkt := &rtp.Packet{Header: rtp.Header{Version: 2, SequenceNumber: 1, Timestamp: 3000, Marker: true}, Payload: make([]byte, 1100)}
	if n := testing.AllocsPerRun(100, func() {
		if err := w.WriteRTP(pkt); err != nil {
			t.Fatal(err)
		}
		pkt.SequenceNumber++
	}); n != 0 {
		t.Errorf("%v allocations per packet", n)
	}
	if pkt.PayloadType != 0 || pkt.SSRC != 0 {
		t.Error("WriteRTP changed the caller's packet")
	}
}

// mountpointSockets stands in for a streaming mountpoint: audio, video and video RTCP ports.
type mountpointSockets struct{ audio, video, rtcp *net.UDPConn }

func listenMountpoint(t *testing.T) (mountpointSockets, FeedTarget) {
	t.Helper()
	listen := func() *net.UDPConn {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	m := mountpointSockets{listen(), listen(), listen()}
	port := func(c *net.UDPConn) int { return c.LocalAddr().(*net.UDPAddr).Port }
	return m, FeedTarget{Host: "127.0.0.1", Audio: port(m.audio), Video: port(m.video), VideoRTCP: port(m.rtcp), AudioPT: 111, VideoPT: 96}
}

// TestFeedSendsMediaAndAnswersKeyframeRequests feeds a stand-in mountpoint: Opus and VP8 arrive
// as plain RTP with the mountpoint's payload types, in sequence; the feed latches the RTCP port;
// and a PLI sent back there makes the next keyframe come before the clip's own (every 60 frames).
func TestFeedSendsMediaAndAnswersKeyframeRequests(t *testing.T) {
	media, err := mediasrc.Load(mediasrc.DefaultDir(), mediasrc.Layers[:1])
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnv(Config{Server: "http://127.0.0.1:1/janus", Media: media})
	if err != nil {
		t.Fatal(err)
	}
	m, target := listenMountpoint(t)
	f, err := StartFeed(env, target)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	deadline := time.Now().Add(20 * time.Second)
	for _, c := range []*net.UDPConn{m.audio, m.video, m.rtcp} {
		_ = c.SetReadDeadline(deadline)
	}

	buf := make([]byte, 1500)
	n, from, err := m.rtcp.ReadFromUDP(buf)
	if err != nil || n != 8 || buf[1] != 201 {
		t.Fatalf("no receiver report latching the RTCP port: %d bytes %x, %v", n, buf[:n], err)
	}
	var p rtp.Packet
	n, err = m.audio.Read(buf)
	if err != nil || p.Unmarshal(buf[:n]) != nil || p.PayloadType != 111 || len(p.Payload) == 0 {
		t.Fatalf("audio: %v %v", err, p.Header)
	}

	// Video: count frames from the clip's first keyframe; send a PLI right after it.
	var ssrc uint32
	var seq uint16
	frames, keyframes, sincePLI := 0, 0, -1
	pli, _ := rtcp.Marshal([]rtcp.Packet{&rtcp.PictureLossIndication{MediaSSRC: 1}})
	for keyframes < 2 {
		n, err := m.video.Read(buf)
		if err != nil {
			t.Fatalf("video after %d frames, %d keyframes: %v", frames, keyframes, err)
		}
		if err := p.Unmarshal(buf[:n]); err != nil || p.PayloadType != 96 {
			t.Fatalf("video packet: %v %v", err, p.Header)
		}
		if frames > 0 && (p.SSRC != ssrc || p.SequenceNumber != seq+1) {
			t.Fatalf("video stream broken: ssrc %d→%d, seq %d→%d", ssrc, p.SSRC, seq, p.SequenceNumber)
		}
		ssrc, seq = p.SSRC, p.SequenceNumber
		// The first packet of a frame (S bit, partition 0) tells a keyframe by the VP8 frame tag.
		if p.Payload[0]&0x10 != 0 {
			frames++
			if sincePLI >= 0 {
				sincePLI++
			}
			if p.Payload[4]&0x01 == 0 {
				keyframes++
				if keyframes == 1 {
					if _, err := m.rtcp.WriteToUDP(pli, from); err != nil {
						t.Fatal(err)
					}
					sincePLI = 0
				}
			}
		}
	}
	if sincePLI >= 60 {
		t.Errorf("the keyframe after the PLI came %d frames later, as the clip's own would", sincePLI)
	}
	if st := f.Sent(); st.Packets == 0 || st.Errors != 0 {
		t.Errorf("sent %+v", st)
	}
}
