package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/gateway/gatewaytest"
	"github.com/strata-rtc/strata/internal/janus"
	"github.com/strata-rtc/strata/internal/peer"
	"github.com/strata-rtc/strata/internal/plugin"
)

// TestRealPeerConnection drives a real Pion PeerConnection through the gateway on loopback: the
// client trickles its candidates before sending the offer (the gateway creates the peer early and it
// queues them), the plugin answers, ICE and DTLS complete (webrtcup), handle_info shows the WebRTC
// state, and hangup produces the hangup event. With full trickle the server's candidates arrive as
// trickle events instead of inside the answer.
func TestRealPeerConnection(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("full_trickle=%v", full), func(t *testing.T) { testRealPeer(t, full) })
	}
}

func testRealPeer(t *testing.T, fullTrickle bool) {
	cfg := config.Default()
	cfg.Media.ICE.Loopback = true
	cfg.Media.ICE.Interfaces = []string{"lo"}
	cfg.Media.ICE.FullTrickle = fullTrickle
	factory, err := peer.NewFactory(cfg.Media, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer factory.Close()
	echo := gatewaytest.NewEcho()
	g := New(cfg, factory, []plugin.Plugin{echo}, quietLogger(), nil)
	defer g.Close()
	e := &testEnv{t: t, g: g, echo: echo, sink: gatewaytest.NewSink()}
	sid := e.create()
	hid := e.attach(sid)

	pc := newLoopbackClient(t)
	offer, cands := gatheredOffer(t, pc)
	for _, c := range cands {
		req := fmt.Sprintf(`{"janus":"trickle","transaction":"t","session_id":{S},"handle_id":{H},"candidate":{"candidate":%q,"sdpMid":"0","sdpMLineIndex":0}}`, c)
		if m := e.do(req, sid, hid); m.Janus != "ack" {
			t.Fatalf("trickle before offer: %s", janus.Encode(m))
		}
	}
	if m := e.do(`{"janus":"trickle","transaction":"t","session_id":{S},"handle_id":{H},"candidate":{"completed":true}}`, sid, hid); m.Janus != "ack" {
		t.Fatalf("trickle completed: %s", janus.Encode(m))
	}
	sdpJSON, _ := json.Marshal(offer)
	if m := e.do(`{"janus":"message","transaction":"o","session_id":{S},"handle_id":{H},"body":{},"jsep":{"type":"offer","sdp":`+string(sdpJSON)+`}}`, sid, hid); m.Janus != "ack" {
		t.Fatalf("offer: %s", janus.Encode(m))
	}

	answer, serverCands := awaitAnswer(t, e.sink, fullTrickle)
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	if fullTrickle == strings.Contains(answer, "a=candidate:") {
		t.Fatalf("full_trickle=%v but the answer has candidates=%v", fullTrickle, !fullTrickle)
	}
	for _, c := range serverCands {
		if err := pc.AddICECandidate(c); err != nil {
			t.Fatalf("server candidate: %v", err)
		}
	}
	if ev, ok := e.sink.WaitFor("webrtcup", 10*time.Second); !ok || ev.Msg.Sender != hid {
		t.Fatal("no webrtcup")
	}
	eventually(t, "client PeerConnection connected", func() bool {
		return pc.ConnectionState() == webrtc.PeerConnectionStateConnected
	})
	if ev := <-echo.Session(hid).Events(); ev != "ready" {
		t.Fatalf("plugin got %q, want MediaReady", ev)
	}
	info := roundTrip(t, e.g.Admin(t.Context(), []byte(fmt.Sprintf(
		`{"janus":"handle_info","transaction":"h","session_id":%d,"handle_id":%d,"admin_secret":"janusoverlord"}`, sid, hid)), Origin{}))
	hi, _ := info["info"].(map[string]any)
	if _, ok := hi["webrtc"].(map[string]any)["ice"]; !ok || hi["flags"].(map[string]any)["ready"] != true {
		t.Fatalf("handle_info without webrtc state: %v", hi)
	}
	if m := e.do(`{"janus":"hangup","transaction":"h","session_id":{S},"handle_id":{H}}`, sid, hid); m.Janus != "success" {
		t.Fatalf("hangup: %s", janus.Encode(m))
	}
	if ev, ok := e.sink.WaitFor("hangup", 5*time.Second); !ok || ev.Msg.Get("reason") != "Janus API" {
		t.Fatalf("hangup event: %+v", ev)
	}
	if ev := <-echo.Session(hid).Events(); ev != "closed:Janus API" {
		t.Fatalf("plugin got %q, want MediaClosed", ev)
	}
}

func newLoopbackClient(t *testing.T) *webrtc.PeerConnection {
	t.Helper()
	var se webrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	pc, err := webrtc.NewAPI(webrtc.WithSettingEngine(se)).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	if _, err := pc.CreateDataChannel("echo", nil); err != nil {
		t.Fatal(err)
	}
	return pc
}

// gatheredOffer returns the client's offer with its candidates taken out, and the candidates, so
// that the test can trickle them ahead of the offer as browsers often do.
func gatheredOffer(t *testing.T, pc *webrtc.PeerConnection) (string, []string) {
	t.Helper()
	o, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	done := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(o); err != nil {
		t.Fatal(err)
	}
	<-done
	var kept, cands []string
	for _, line := range strings.Split(pc.LocalDescription().SDP, "\r\n") {
		switch {
		case strings.HasPrefix(line, "a=candidate:"):
			cands = append(cands, strings.TrimPrefix(line, "a="))
		case line == "a=end-of-candidates":
		default:
			kept = append(kept, line)
		}
	}
	if len(cands) == 0 {
		t.Fatal("client gathered no candidates on loopback")
	}
	return strings.Join(kept, "\r\n"), cands
}

// awaitAnswer reads events until the plugin's answer; with full trickle it also collects the
// server's candidates up to {"completed":true}.
func awaitAnswer(t *testing.T, sink *gatewaytest.Sink, fullTrickle bool) (string, []webrtc.ICECandidateInit) {
	t.Helper()
	var answer string
	var cands []webrtc.ICECandidateInit
	completed := !fullTrickle
	deadline := time.Now().Add(10 * time.Second)
	for answer == "" || !completed {
		ev, ok := sink.Next(time.Until(deadline))
		if !ok {
			t.Fatalf("answer=%v completed=%v before the deadline", answer != "", completed)
		}
		switch ev.Msg.Janus {
		case "event":
			if j, ok := ev.Msg.JSEP.(*plugin.JSEP); ok && j.Type == "answer" {
				answer = j.SDP
			}
		case "trickle":
			switch c := ev.Msg.Get("candidate").(type) {
			case *webrtc.ICECandidateInit:
				cands = append(cands, *c)
			case map[string]bool:
				completed = c["completed"]
			}
		}
	}
	return answer, cands
}
