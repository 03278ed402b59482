package audiobridge_test

import (
	"net"
	"testing"
	"time"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/config"
)

// udpPeer is a plain-RTP endpoint on loopback: it sends Opus tone packets to the plugin and
// decodes what comes back.
type udpPeer struct {
	t    *testing.T
	conn *net.UDPConn
}

func newUDPPeer(t *testing.T) *udpPeer {
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &udpPeer{t: t, conn: conn}
}

func (u *udpPeer) port() int { return u.conn.LocalAddr().(*net.UDPAddr).Port }

// sendTone sends n 20 ms Opus packets of a tone to addr with payload type pt, paced.
func (u *udpPeer) sendTone(addr *net.UDPAddr, pt uint8, hz float64, n int, stop <-chan struct{}) {
	f := audio.Format{Rate: 48000, Channels: 1}
	enc, err := audio.NewEncoder(f, audio.EncoderConfig{})
	if err != nil {
		u.t.Error(err)
		return
	}
	pcm, buf := make([]int16, f.FrameLen()), make([]byte, audio.MaxPacket)
	phase := 0
	for i := 0; i < n; i++ {
		select {
		case <-stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
		phase = audio.Tone(pcm, 1, 48000, hz, 8000, phase)
		m, err := enc.Encode(pcm, buf)
		if err != nil {
			u.t.Error(err)
			return
		}
		p := rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: pt, SequenceNumber: uint16(i), Timestamp: uint32(i * 960), SSRC: 0x1234}, Payload: buf[:m]}
		b, _ := p.Marshal()
		_, _ = u.conn.WriteToUDP(b, addr)
	}
}

// heard decodes d of what arrives (Opus or G.711 law at 8 kHz) at rate and returns the PCM.
func (u *udpPeer) heard(d time.Duration, dec audio.FrameDecoder, f audio.Format) []int16 {
	var out []int16
	pcm := make([]int16, f.FrameLen())
	buf := make([]byte, 1500)
	deadline := time.Now().Add(d + 5*time.Second)
	frames := int(d / (20 * time.Millisecond))
	for got := 0; got < frames && time.Now().Before(deadline); {
		_ = u.conn.SetReadDeadline(deadline)
		n, _, err := u.conn.ReadFromUDP(buf)
		if err != nil {
			break
		}
		var p rtp.Packet
		if p.Unmarshal(buf[:n]) != nil || dec.Decode(p.Payload, pcm) != nil {
			continue
		}
		out = append(out, pcm...)
		got++
	}
	if len(out) < frames*f.FrameLen() {
		u.t.Fatalf("received %d samples, want %d", len(out), frames*f.FrameLen())
	}
	return out
}

// TestPlainRTPParticipant: a plain-RTP participant (allow_rtp_participants) is told where to
// send; its tone reaches a WebRTC participant, and the WebRTC participant's tone comes back to
// it over the same port, as real UDP.
func TestPlainRTPParticipant(t *testing.T) {
	c := startServer(t, func(cfg *config.Config) {
		cfg.Plugins.AudioBridge.Rooms = append(cfg.Plugins.AudioBridge.Rooms,
			config.AudioBridgeRoom{ID: 90, AllowRTPParticipants: true})
	})
	web := joinTalker(t, c, 90, tones[0], 1, nil)
	u := newUDPPeer(t)
	h := attach(t, c)
	data, _ := mustRequest(t, h, map[string]any{"request": "join", "room": 90, "display": "rtp",
		"rtp": map[string]any{"ip": "127.0.0.1", "port": u.port(), "payload_type": 111}}, nil)
	info, ok := data["rtp"].(map[string]any)
	if !ok || info["payload_type"] != float64(111) {
		t.Fatalf("joined %v: want rtp with ip, port and payload type 111", data)
	}
	to := &net.UDPAddr{IP: net.ParseIP(info["ip"].(string)), Port: int(info["port"].(float64))}
	stop := make(chan struct{})
	defer close(stop)
	go u.sendTone(to, 111, tones[1], 500, stop)
	waitEvent(t, web.h, 5*time.Second, func(d map[string]any) bool {
		ps, _ := d["participants"].([]any)
		return len(ps) == 1 && ps[0].(map[string]any)["setup"] == true && ps[0].(map[string]any)["display"] == "rtp"
	})
	time.Sleep(500 * time.Millisecond)
	if got := web.toneIn(web.recent(600*time.Millisecond), 0, tones[1]); got < 0.08 {
		t.Errorf("the WebRTC participant hears the plain-RTP tone at %.3f", got)
	}
	f := audio.Format{Rate: 16000, Channels: 1}
	dec, _ := audio.NewDecoder(f)
	pcm := u.heard(600*time.Millisecond, dec, f)
	if own, other := audio.ToneLevel(pcm, 1, 0, 16000, tones[1]), audio.ToneLevel(pcm[len(pcm)/2:], 1, 0, 16000, tones[0]); other < 0.08 || own > 0.01 {
		t.Errorf("the plain-RTP participant hears the WebRTC tone at %.3f and its own at %.3f", other, own)
	}
}

// TestRTPForwardOfTheMix: rtp_forward sends the room's full mix to a UDP port, as Opus and as
// G.711; listforwarders shows it and stop_rtp_forward ends it.
func TestRTPForwardOfTheMix(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	mustRequest(t, admin, map[string]any{"request": "create", "room": 5, "secret": "s"}, nil)
	joinTalker(t, c, 5, tones[0], 1, nil)
	joinTalker(t, c, 5, tones[2], 1, nil)
	_, _, err := request(t, admin, map[string]any{"request": "rtp_forward", "room": 5, "host": "127.0.0.1", "port": 9, "secret": "x"}, nil)
	wantCode(t, err, 489)

	for _, codec := range []string{"opus", "pcmu"} {
		u := newUDPPeer(t)
		data, _ := mustRequest(t, admin, map[string]any{"request": "rtp_forward", "room": 5, "host": "127.0.0.1",
			"port": u.port(), "codec": codec, "secret": "s"}, nil)
		id := data["stream_id"].(float64)
		f := audio.Format{Rate: 16000, Channels: 1}
		var dec audio.FrameDecoder
		if codec == "opus" {
			dec, _ = audio.NewDecoder(f)
		} else {
			f = audio.Format{Rate: 8000, Channels: 1}
			dec, _ = audio.NewG711Decoder(f, audio.ULaw)
		}
		time.Sleep(300 * time.Millisecond)
		pcm := u.heard(600*time.Millisecond, dec, f)
		for _, hz := range []float64{tones[0], tones[2]} {
			if got := audio.ToneLevel(pcm, 1, 0, f.Rate, hz); got < 0.08 {
				t.Errorf("%s forward: %v Hz at %.3f", codec, hz, got)
			}
		}
		lf, _ := mustRequest(t, admin, map[string]any{"request": "listforwarders", "room": 5, "secret": "s"}, nil)
		if fw := lf["rtp_forwarders"].([]any); len(fw) != 1 || fw[0].(map[string]any)["stream_id"] != id || fw[0].(map[string]any)["codec"] != codec {
			t.Fatalf("listforwarders: %v", lf)
		}
		mustRequest(t, admin, map[string]any{"request": "stop_rtp_forward", "room": 5, "stream_id": id, "secret": "s"}, nil)
		lf, _ = mustRequest(t, admin, map[string]any{"request": "listforwarders", "room": 5, "secret": "s"}, nil)
		if fw := lf["rtp_forwarders"].([]any); len(fw) != 0 {
			t.Fatalf("listforwarders after stop: %v", lf)
		}
	}
}

// TestBadMediaDoesNotStallTheMix: a plain-RTP participant sends datagrams that are not RTP, Opus
// payloads that are garbage, packets of a payload type it did not negotiate, and 10 ms Opus
// frames; meanwhile the others go on hearing each other, tick after tick.
func TestBadMediaDoesNotStallTheMix(t *testing.T) {
	c := startServer(t, func(cfg *config.Config) {
		cfg.Plugins.AudioBridge.Rooms = append(cfg.Plugins.AudioBridge.Rooms,
			config.AudioBridgeRoom{ID: 91, AllowRTPParticipants: true})
	})
	listener := joinTalker(t, c, 91, 0, 1, nil)
	joinTalker(t, c, 91, tones[0], 1, nil)
	u := newUDPPeer(t)
	data, _ := mustRequest(t, attach(t, c), map[string]any{"request": "join", "room": 91,
		"rtp": map[string]any{"ip": "127.0.0.1", "port": u.port(), "payload_type": 111}}, nil)
	info := data["rtp"].(map[string]any)
	to := &net.UDPAddr{IP: net.ParseIP(info["ip"].(string)), Port: int(info["port"].(float64))}

	stop := make(chan struct{})
	go func() {
		bad := [][]byte{
			[]byte("not rtp at all"),
			{0x80, 111, 0, 1, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0xff, 0xfe, 0xfd, 0xfc, 0xfb}, // garbage Opus
			{0x80, 0, 0, 2, 0, 0, 3, 0xc0, 0, 0, 0x12, 0x34, 0xd5, 0xd5, 0xd5},            // PCMU, not negotiated
			{0x80, 111, 0, 3, 0, 0, 7, 0x80, 0, 0, 0x12, 0x34, 0x00, 0x01, 0x02, 0x03},    // a 10 ms SILK frame
			{0x80},
		}
		for seq := uint16(10); ; seq++ {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			b := append([]byte(nil), bad[int(seq)%len(bad)]...)
			if len(b) >= 4 {
				b[2], b[3] = byte(seq>>8), byte(seq)
			}
			_, _ = u.conn.WriteToUDP(b, to)
		}
	}()
	defer close(stop)
	time.Sleep(500 * time.Millisecond)
	listener.mu.Lock()
	before := listener.frames
	listener.mu.Unlock()
	pcm := listener.recent(time.Second)
	listener.mu.Lock()
	after := listener.frames
	listener.mu.Unlock()
	if got := listener.toneIn(pcm, 0, tones[0]); got < 0.08 {
		t.Errorf("under bad input the listener hears the talker at %.3f", got)
	}
	if after-before < 45 {
		t.Errorf("the listener got %d frames in a second of bad input, want about 50", after-before)
	}
}

// TestRTPForwardOfAGroup: in a room with groups, a forwarder of one group sends that group's
// participants only; a configure moves a participant between groups.
func TestRTPForwardOfAGroup(t *testing.T) {
	c := startServer(t, nil)
	admin := attach(t, c)
	mustRequest(t, admin, map[string]any{"request": "create", "room": 6, "groups": []string{"a", "b"}}, nil)
	_, _, err := request(t, attach(t, c), map[string]any{"request": "join", "room": 6}, nil)
	wantCode(t, err, 483)
	_, _, err = request(t, attach(t, c), map[string]any{"request": "join", "room": 6, "group": "c"}, nil)
	wantCode(t, err, 494)
	inA := joinTalker(t, c, 6, tones[0], 1, map[string]any{"group": "a"})
	joinTalker(t, c, 6, tones[2], 1, map[string]any{"group": "b"})
	u := newUDPPeer(t)
	mustRequest(t, admin, map[string]any{"request": "rtp_forward", "room": 6, "host": "127.0.0.1", "port": u.port(), "group": "a"}, nil)
	f := audio.Format{Rate: 16000, Channels: 1}
	dec, _ := audio.NewDecoder(f)
	time.Sleep(300 * time.Millisecond)
	pcm := u.heard(600*time.Millisecond, dec, f)
	if a, b := audio.ToneLevel(pcm, 1, 0, 16000, tones[0]), audio.ToneLevel(pcm, 1, 0, 16000, tones[2]); a < 0.08 || b > 0.01 {
		t.Errorf("group a's forward: its participant at %.3f, group b's at %.3f", a, b)
	}
	mustRequest(t, inA.h, map[string]any{"request": "configure", "group": "b"}, nil)
	time.Sleep(300 * time.Millisecond)
	pcm = u.heard(600*time.Millisecond, dec, f)
	if a := audio.ToneLevel(pcm[len(pcm)/2:], 1, 0, 16000, tones[0]); a > 0.01 {
		t.Errorf("after moving to group b the participant is still in group a's forward at %.3f", a)
	}
}
