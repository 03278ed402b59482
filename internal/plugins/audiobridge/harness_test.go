package audiobridge_test

import (
	"sync"
	"testing"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/audio"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/plugins/audiobridge"
	"github.com/strata-rtc/strata/internal/sfu"
)

// startServer runs a complete strata on loopback with edit applied to its configuration;
// plain-RTP participants are told to send to loopback.
func startServer(t testing.TB, edit func(*config.Config)) *janusclient.Client {
	t.Helper()
	return janustest.StartServer(t, func(cfg *config.Config) {
		cfg.Plugins.AudioBridge.LocalIP = "127.0.0.1"
		if edit != nil {
			edit(cfg)
		}
	}, janustest.Logger())
}

func attach(t testing.TB, c *janusclient.Client) *janusclient.Handle {
	t.Helper()
	return janustest.Attach(t, c, audiobridge.Package)
}

var (
	request     = janustest.Request
	mustRequest = janustest.MustRequest
	wantCode    = janustest.WantCode
	waitEvent   = janustest.WaitEvent
)

// clientAPI is a browser-like Pion API on loopback that negotiates the audio level extension.
func clientAPI(t testing.TB) *webrtc.API {
	t.Helper()
	var se webrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	me := &webrtc.MediaEngine{}
	if err := me.RegisterDefaultCodecs(); err != nil {
		t.Fatal(err)
	}
	if err := me.RegisterHeaderExtension(webrtc.RTPHeaderExtensionCapability{URI: sfu.AudioLevelURI}, webrtc.RTPCodecTypeAudio); err != nil {
		t.Fatal(err)
	}
	reg := &interceptor.Registry{}
	if err := webrtc.RegisterDefaultInterceptors(me, reg); err != nil {
		t.Fatal(err)
	}
	return webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(me), webrtc.WithInterceptorRegistry(reg))
}

var completeLocal = janustest.CompleteLocal

// talker is a participant with a Pion PeerConnection that sends real Opus carrying a tone (with
// its RFC 6464 level) and keeps the decoded mix it receives.
type talker struct {
	t     testing.TB
	h     *janusclient.Handle
	id    uint64
	pc    *webrtc.PeerConnection
	track *webrtc.TrackLocalStaticRTP
	rate  int // the rate the received mix is decoded at
	chans int

	mu     sync.Mutex
	tone   float64 // Hz; 0 sends silence
	level  uint8   // RFC 6464 -dBov sent with each packet
	heard  []int16 // decoded mix, interleaved
	frames int
	done   chan struct{}
}

const clientRate = 48000

// joinTalker joins room with extra join fields, negotiates, and starts sending tone.
func joinTalker(t testing.TB, c *janusclient.Client, room uint64, tone float64, chans int, extra map[string]any) *talker {
	t.Helper()
	h := attach(t, c)
	body := map[string]any{"request": "join", "room": room, "display": "tone"}
	for k, v := range extra {
		body[k] = v
	}
	data, serverOffer := mustRequest(t, h, body, nil)
	if data["audiobridge"] != "joined" {
		t.Fatalf("join: %v", data)
	}
	tk := &talker{t: t, h: h, id: uint64(data["id"].(float64)), rate: clientRate, chans: chans, tone: tone, level: 20,
		done: make(chan struct{})}
	pc, err := clientAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	tk.pc = pc
	t.Cleanup(func() { close(tk.done); _ = pc.Close() })
	tk.track, err = webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "audio", "tone")
	if err != nil {
		t.Fatal(err)
	}
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) { go tk.receive(tr) })
	if serverOffer != nil { // generate_offer: the plugin offered, the client answers in configure
		if serverOffer.Type != "offer" {
			t.Fatalf("join's jsep %v: want an offer", serverOffer)
		}
		if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: serverOffer.SDP}); err != nil {
			t.Fatal(err)
		}
		if _, err := pc.AddTrack(tk.track); err != nil {
			t.Fatal(err)
		}
		answer, err := pc.CreateAnswer(nil)
		if err != nil {
			t.Fatal(err)
		}
		data, j := mustRequest(t, h, map[string]any{"request": "configure", "muted": false}, completeLocal(t, pc, answer))
		if data["result"] != "ok" || j != nil {
			t.Fatalf("configure with the answer: %v, jsep %v", data, j)
		}
		go tk.send()
		return tk
	}
	if _, err := pc.AddTransceiverFromTrack(tk.track, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendrecv}); err != nil {
		t.Fatal(err)
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	data, answer := mustRequest(t, h, map[string]any{"request": "configure", "muted": false}, completeLocal(t, pc, offer))
	if data["result"] != "ok" || answer == nil {
		t.Fatalf("configure: %v, answer %v", data, answer)
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		t.Fatal(err)
	}
	go tk.send()
	return tk
}

// levelID is the audio level extension's id the negotiation gave the talker's track (0: none).
func (tk *talker) levelID() uint8 {
	for _, tr := range tk.pc.GetTransceivers() {
		if tr.Sender() == nil {
			continue
		}
		for _, e := range tr.Sender().GetParameters().HeaderExtensions {
			if e.URI == sfu.AudioLevelURI {
				return uint8(e.ID)
			}
		}
	}
	return 0
}

// send paces 20 ms Opus frames of the tone, with the audio level extension.
func (tk *talker) send() {
	ext := tk.levelID()
	f := audio.Format{Rate: clientRate, Channels: 1}
	enc, err := audio.NewEncoder(f, audio.EncoderConfig{Bitrate: 32000})
	if err != nil {
		tk.t.Error(err)
		return
	}
	pcm := make([]int16, f.FrameLen())
	buf := make([]byte, audio.MaxPacket)
	var phase int
	seq, ts := uint16(1), uint32(0)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tk.done:
			return
		case <-tick.C:
		}
		tk.mu.Lock()
		tone, level := tk.tone, tk.level
		tk.mu.Unlock()
		if tone > 0 {
			phase = audio.Tone(pcm, 1, clientRate, tone, 8000, phase)
		} else {
			clear(pcm)
			level = 127
		}
		n, err := enc.Encode(pcm, buf)
		if err != nil {
			tk.t.Error(err)
			return
		}
		pkt := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: seq, Timestamp: ts}, Payload: buf[:n]}
		if ext != 0 {
			if err := pkt.Header.SetExtension(ext, []byte{0x80 | level}); err != nil {
				tk.t.Error(err)
				return
			}
		}
		seq++
		ts += 960
		_ = tk.track.WriteRTP(pkt)
	}
}

// receive decodes the mix into heard.
func (tk *talker) receive(tr *webrtc.TrackRemote) {
	dec, err := audio.NewDecoder(audio.Format{Rate: tk.rate, Channels: tk.chans})
	if err != nil {
		tk.t.Error(err)
		return
	}
	pcm := make([]int16, audio.Format{Rate: tk.rate, Channels: tk.chans}.FrameLen())
	for {
		pkt, _, err := tr.ReadRTP()
		if err != nil {
			return
		}
		if dec.Decode(pkt.Payload, pcm) != nil {
			continue
		}
		tk.mu.Lock()
		tk.heard = append(tk.heard, pcm...)
		tk.frames++
		tk.mu.Unlock()
	}
}

// setTone changes what the talker sends (0: silence).
func (tk *talker) setTone(hz float64) {
	tk.mu.Lock()
	tk.tone = hz
	tk.mu.Unlock()
}

// recent is the last d of decoded mix; it waits until that much has arrived after now.
func (tk *talker) recent(d time.Duration) []int16 {
	tk.t.Helper()
	want := int(d/(20*time.Millisecond)) * audio.Format{Rate: tk.rate, Channels: tk.chans}.FrameLen()
	tk.mu.Lock()
	start := len(tk.heard)
	tk.mu.Unlock()
	deadline := time.Now().Add(d + 5*time.Second)
	for time.Now().Before(deadline) {
		tk.mu.Lock()
		if len(tk.heard)-start >= want {
			out := append([]int16(nil), tk.heard[len(tk.heard)-want:]...)
			tk.mu.Unlock()
			return out
		}
		tk.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	tk.t.Fatalf("participant %d received %d samples of mix, want %d more", tk.id, len(tk.heard)-start, want)
	return nil
}

// level is the strength of tone hz in one channel of pcm.
func (tk *talker) toneIn(pcm []int16, channel int, hz float64) float64 {
	return audio.ToneLevel(pcm, tk.chans, channel, tk.rate, hz)
}
