package peer

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
)

func itoa(i int) string { return strconv.Itoa(i) }

func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// serverOffer returns a strata offer (audio, video, data) gathered with the given configuration.
func serverOffer(t *testing.T, m config.Media) string {
	t.Helper()
	f := newTestFactory(t, m)
	p := newTestPeer(t, f, Hooks{})
	offer, err := p.Offer(testContext(t), BeforeLocal(func(pc *webrtc.PeerConnection) error {
		for _, kind := range []webrtc.RTPCodecType{webrtc.RTPCodecTypeAudio, webrtc.RTPCodecTypeVideo} {
			if _, err := pc.AddTransceiverFromKind(kind, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionRecvonly}); err != nil {
				return err
			}
		}
		_, err := pc.CreateDataChannel("probe", nil)
		return err
	}))
	if err != nil {
		t.Fatalf("Offer: %v", err)
	}
	return offer.SDP
}

type candidate struct {
	proto, addr, typ, tcpType string
	port                      int
}

func candidates(t *testing.T, s string) []candidate {
	t.Helper()
	var out []candidate
	for line := range strings.Lines(s) {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "a=candidate:")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) < 8 {
			t.Fatalf("short candidate %q", line)
		}
		port, _ := strconv.Atoi(f[5])
		c := candidate{proto: strings.ToLower(f[2]), addr: f[4], port: port, typ: f[7]}
		if i := slices.Index(f, "tcptype"); i >= 0 && i+1 < len(f) {
			c.tcpType = f[i+1]
		}
		out = append(out, c)
	}
	return out
}

func TestPortRangeBoundsHostCandidates(t *testing.T) {
	m := testMedia()
	m.ICE.PortMin, m.ICE.PortMax = 47100, 47199
	cs := candidates(t, serverOffer(t, m))
	if len(cs) == 0 {
		t.Fatal("no candidates")
	}
	for _, c := range cs {
		if c.port < 47100 || c.port > 47199 {
			t.Errorf("candidate port %d outside 47100-47199", c.port)
		}
	}
}

func TestUDPMuxPortIsTheOnlyPort(t *testing.T) {
	m := testMedia()
	m.ICE.UDPMuxPort = freeUDPPort(t)
	m.ICE.PortMin, m.ICE.PortMax = 47100, 47199 // ignored with a mux port
	cs := candidates(t, serverOffer(t, m))
	if len(cs) == 0 {
		t.Fatal("no candidates")
	}
	for _, c := range cs {
		if c.port != m.ICE.UDPMuxPort {
			t.Errorf("candidate port %d, want the mux port %d", c.port, m.ICE.UDPMuxPort)
		}
	}
}

func TestNAT1To1ReplacesHostAddress(t *testing.T) {
	m := testMedia()
	m.ICE.Interfaces = []string{"lo"}
	m.ICE.NAT1To1IPs = []string{"203.0.113.7"}
	cs := candidates(t, serverOffer(t, m))
	if len(cs) == 0 {
		t.Fatal("no candidates")
	}
	for _, c := range cs {
		if c.addr != "203.0.113.7" {
			t.Errorf("candidate address %s, want the 1:1 address", c.addr)
		}
	}
}

func TestSTUNAndTURNServersReachTheConfiguration(t *testing.T) {
	conf := rtcConfiguration(config.ICE{
		STUNServers: []string{"stun:stun.example.org:3478"},
		TURNServers: []config.TURNServer{{URLs: []string{"turn:turn.example.org:3478?transport=udp"}, Username: "u", Credential: "p"}},
	})
	if len(conf.ICEServers) != 2 {
		t.Fatalf("ICE servers %+v", conf.ICEServers)
	}
	if conf.ICEServers[0].URLs[0] != "stun:stun.example.org:3478" {
		t.Errorf("STUN server %+v", conf.ICEServers[0])
	}
	turn := conf.ICEServers[1]
	if turn.URLs[0] != "turn:turn.example.org:3478?transport=udp" || turn.Username != "u" || turn.Credential != "p" {
		t.Errorf("TURN server %+v", turn)
	}
	if conf.BundlePolicy != webrtc.BundlePolicyMaxBundle || conf.RTCPMuxPolicy != webrtc.RTCPMuxPolicyRequire {
		t.Errorf("bundle/rtcp-mux policy %v %v", conf.BundlePolicy, conf.RTCPMuxPolicy)
	}
	if len(rtcConfiguration(config.ICE{}).ICEServers) != 0 {
		t.Error("servers configured out of nothing")
	}
}

func TestICETCPAddsPassiveCandidates(t *testing.T) {
	m := testMedia()
	m.ICE.TCPPort = freeTCPPort(t)
	var tcp int
	for _, c := range candidates(t, serverOffer(t, m)) {
		if c.proto == "tcp" {
			tcp++
			if c.port != m.ICE.TCPPort || c.tcpType != "passive" {
				t.Errorf("TCP candidate %+v, want passive on %d", c, m.ICE.TCPPort)
			}
		}
	}
	if tcp == 0 {
		t.Error("ICE-TCP on but no TCP candidate")
	}
	m.ICE.TCPPort = 0
	for _, c := range candidates(t, serverOffer(t, m)) {
		if c.proto == "tcp" {
			t.Errorf("ICE-TCP off but TCP candidate %+v", c)
		}
	}
}

func TestICELiteIsAdvertised(t *testing.T) {
	m := testMedia()
	if strings.Contains(serverOffer(t, m), "a=ice-lite") {
		t.Error("ice-lite advertised while off")
	}
	m.ICE.Lite = true
	if !strings.Contains(serverOffer(t, m), "a=ice-lite") {
		t.Error("ice-lite not advertised")
	}
}

func TestLoopbackCandidatesFollowConfig(t *testing.T) {
	m := testMedia() // only "lo": candidates exist only with loopback on
	if cs := candidates(t, serverOffer(t, m)); len(cs) == 0 {
		t.Error("loopback on: no loopback candidate")
	}
	m.ICE.Loopback = false
	if cs := candidates(t, serverOffer(t, m)); len(cs) != 0 {
		t.Errorf("loopback off: got candidates %+v", cs)
	}
}

func TestInterfaceFilter(t *testing.T) {
	m := testMedia()
	m.ICE.Interfaces = []string{"lo"}
	for _, c := range candidates(t, serverOffer(t, m)) {
		if ip := net.ParseIP(c.addr); ip == nil || !ip.IsLoopback() {
			t.Errorf("candidate %s from outside the lo interface", c.addr)
		}
	}
	keep := interfaceFilter([]string{"eth*", "lo"})
	for name, want := range map[string]bool{"eth0": true, "lo": true, "lo2": false, "wlan0": false} {
		if keep(name) != want {
			t.Errorf("filter(%q) = %v", name, !want)
		}
	}
	if interfaceFilter(nil) != nil {
		t.Error("empty interface list should not filter")
	}
}

func TestCodecsOffered(t *testing.T) {
	offer := serverOffer(t, testMedia())
	for _, want := range []string{
		"opus/48000/2", "useinbandfec=1", "VP8/90000", "VP9/90000", "profile-id=0", "profile-id=2",
		"profile-level-id=42e01f", "profile-level-id=42001f", "profile-level-id=4d001f", "profile-level-id=640032",
		"AV1/90000", "a=rtpmap:121 multiopus/48000/6", "a=rtpmap:0 PCMU/8000", "a=rtpmap:8 PCMA/8000",
		"a=fmtp:121 minptime=10;useinbandfec=1;channel_mapping=0,4,1,2,3,5;num_streams=4;coupled_streams=2",
	} {
		if !strings.Contains(offer, want) {
			t.Errorf("offer lacks %q", want)
		}
	}
	if n := strings.Count(offer, " apt="); n != len(videoCodecs) {
		t.Errorf("%d rtx apt= lines, want one per video codec (%d)", n, len(videoCodecs))
	}
	if got := countLines(offer, "a=rtpmap:"); got != 4+2*len(videoCodecs) {
		t.Errorf("%d rtpmap lines, want %d (opus, multiopus, PCMU, PCMA, each video codec with rtx)", got, 4+2*len(videoCodecs))
	}
	if strings.Index(offer, "PCMU/8000") < strings.Index(offer, "multiopus/48000/6") {
		t.Error("G.711 is preferred to Opus in strata's offers")
	}
	if strings.Index(offer, "opus/48000/2") > strings.Index(offer, "multiopus/48000/6") {
		t.Error("multiopus is preferred to opus in strata's offers")
	}
}

func TestFeedbackAndExtensionsFollowConfig(t *testing.T) {
	all := serverOffer(t, testMedia())
	for _, want := range []string{"nack", "nack pli", "ccm fir", "goog-remb", "transport-cc"} {
		if !strings.Contains(all, "a=rtcp-fb:96 "+want+"\r\n") {
			t.Errorf("VP8 lacks feedback %q", want)
		}
	}
	if !strings.Contains(all, "a=rtcp-fb:111 transport-cc") {
		t.Error("opus lacks transport-cc")
	}
	for _, uri := range []string{
		sdp.SDESMidURI, sdp.SDESRTPStreamIDURI, sdp.SDESRepairRTPStreamIDURI, sdp.AudioLevelURI, sdp.TransportCCURI,
		PlayoutDelayURI, VideoOrientationURI, DependencyDescriptorURI,
	} {
		if !strings.Contains(all, " "+uri+"\r\n") {
			t.Errorf("offer lacks extension %s", uri)
		}
	}
	// abs-send-time only where the REMB estimator reads it.
	if strings.Contains(all, sdp.ABSSendTimeURI) {
		t.Errorf("abs-send-time offered without remb_estimator gcc-draft")
	}
	remb := testMedia()
	remb.CongestionControl.REMBEstimator = "gcc-draft"
	if offer := serverOffer(t, remb); !strings.Contains(offer, " "+sdp.ABSSendTimeURI+"\r\n") {
		t.Errorf("remb_estimator gcc-draft without abs-send-time")
	}

	for _, tc := range []struct {
		name    string
		set     func(*config.Media)
		missing []string
	}{
		{"nack off", func(m *config.Media) { m.NACK = false }, []string{"a=rtcp-fb:96 nack"}},
		{"remb off", func(m *config.Media) { m.REMB = false }, []string{"goog-remb"}},
		{"twcc off", func(m *config.Media) { m.TWCC = false }, []string{"transport-cc", sdp.TransportCCURI}},
		{"twcc_audio off", func(m *config.Media) { m.TWCCAudio = false }, []string{"a=rtcp-fb:111 transport-cc"}},
		{"rtx off", func(m *config.Media) { m.RTX = false }, []string{"rtx/90000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testMedia()
			tc.set(&m)
			offer := serverOffer(t, m)
			for _, s := range tc.missing {
				if strings.Contains(offer, s) {
					t.Errorf("%s: offer still has %q", tc.name, s)
				}
			}
			if !strings.Contains(offer, "VP8/90000") {
				t.Errorf("%s: VP8 gone", tc.name)
			}
		})
	}
}

// TestTWCCAudioOffKeepsTheRest: without transport-cc feedback for audio, video keeps it and audio
// keeps the transport-wide sequence numbers (Janus 1.1's answer).
func TestTWCCAudioOffKeepsTheRest(t *testing.T) {
	m := testMedia()
	m.TWCCAudio = false
	offer := serverOffer(t, m)
	if !strings.Contains(offer, "a=rtcp-fb:96 transport-cc\r\n") {
		t.Error("VP8 lost transport-cc")
	}
	audio, _, _ := strings.Cut(offer[strings.Index(offer, "m=audio"):], "m=video")
	if !strings.Contains(audio, " "+sdp.TransportCCURI+"\r\n") {
		t.Errorf("the audio m-line lost the transport-wide sequence number extension:\n%s", audio)
	}
}

// TestNACKAndTWCCFeedbackReachTheSender: a gap in what the client sends makes strata NACK it, and
// strata sends transport-wide feedback for what it receives.
func TestNACKAndTWCCFeedbackReachTheSender(t *testing.T) {
	got := make(chan string, 256)
	video, _, rec := sendingClient(t, func(p rtcp.Packet) {
		var kind string
		switch p.(type) {
		case *rtcp.TransportLayerNack:
			kind = "nack"
		case *rtcp.TransportLayerCC:
			kind = "twcc"
		default:
			return
		}
		select {
		case got <- kind:
		default:
		}
	})
	go func() {
		payload := make([]byte, 100)
		for i := range 200 {
			if i%5 == 2 {
				continue // a hole for the NACK generator
			}
			_ = video.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: uint16(i), Timestamp: uint32(i * 3000)}, Payload: payload})
			time.Sleep(5 * time.Millisecond)
		}
	}()
	seen := map[string]bool{}
	deadline := time.After(8 * time.Second)
	for !seen["nack"] || !seen["twcc"] {
		select {
		case k := <-got:
			seen[k] = true
		case <-deadline:
			t.Fatalf("feedback seen: %v", seen)
		}
	}
	// One packet in five lost is far above the slow-link threshold (4 per window).
	if ev := waitFor(t, rec.slow, 5*time.Second, "slowlink"); ev != "video:up" {
		t.Errorf("slowlink event %q, want video:up", ev)
	}
}
