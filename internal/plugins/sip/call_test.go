package sip_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/peer/peertest"
	sipplugin "github.com/strata-rtc/strata/internal/plugins/sip"
)

// phone is a Pion PeerConnection playing the browser of a SIP call: it sends PCMU (each packet's
// payload filled with one byte, its sequence number's low byte) and counts what comes back intact.
type phone struct {
	pc       *webrtc.PeerConnection
	track    *webrtc.TrackLocalStaticRTP
	received atomic.Int64
}

func newPhone(t *testing.T) *phone {
	t.Helper()
	pc, err := peertest.BrowserAPI(t).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	tr, err := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMU, ClockRate: 8000}, "audio", "phone")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.AddTrack(tr); err != nil {
		t.Fatal(err)
	}
	p := &phone{pc: pc, track: tr}
	pc.OnTrack(func(remote *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			pkt, _, err := remote.ReadRTP()
			if err != nil {
				return
			}
			if pl := pkt.Payload; len(pl) == 160 && pl[0] == pl[159] {
				p.received.Add(1)
			}
		}
	})
	return p
}

// talk sends 20 ms PCMU packets until ctx ends.
func (p *phone) talk(ctx context.Context) {
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		payload := make([]byte, 160)
		for seq := uint16(1); ; seq++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for i := range payload {
				payload[i] = byte(seq)
			}
			_ = p.track.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, SequenceNumber: seq, Timestamp: uint32(seq) * 160}, Payload: payload})
		}
	}()
}

// waitEcho waits for n packets to come back.
func (p *phone) waitEcho(t *testing.T, n int64) {
	t.Helper()
	for deadline := time.Now().Add(8 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if p.received.Load() >= n {
			return
		}
	}
	t.Fatalf("%d packets echoed back, want %d", p.received.Load(), n)
}

// startStrata runs a loopback strata whose SIP plugin binds 127.0.0.1.
func startStrata(t *testing.T) *janusclient.Handle {
	t.Helper()
	return startStrataIn(t, t.TempDir())
}

// startStrataIn is startStrata with recordings in dir.
func startStrataIn(t *testing.T, dir string) *janusclient.Handle {
	t.Helper()
	c := janustest.StartServer(t, func(cfg *config.Config) {
		cfg.Plugins.SIP.LocalIP = "127.0.0.1"
		cfg.Plugins.SIP.RTPPortRange = ""
		cfg.Plugins.SIP.KeepaliveInterval = 0
		cfg.Plugins.SIP.RecordingsDir = dir
	}, janustest.Logger())
	return janustest.Attach(t, c, sipplugin.Package)
}

// recordBothSides records the browser's audio and the SIP peer's for a second: two .mjr files with
// more than their header in them.
func recordBothSides(t *testing.T, h *janusclient.Handle, dir string) {
	t.Helper()
	data, _ := janustest.MustRequest(t, h, map[string]any{"request": "recording", "action": "start", "audio": true,
		"peer_audio": true, "filename": "rec"}, nil)
	if result(data) != "recordingupdated" {
		t.Fatalf("recording start: %v", data)
	}
	time.Sleep(time.Second)
	janustest.MustRequest(t, h, map[string]any{"request": "recording", "action": "stop", "audio": true, "peer_audio": true}, nil)
	for _, name := range []string{"rec-user-audio.mjr", "rec-peer-audio.mjr"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Size() < 1000 {
			entries, _ := os.ReadDir(dir)
			t.Fatalf("%s: %v (size %v); dir has %v", name, err, st, entries)
		}
	}
}

// result is a SIP event's result.event.
func result(d map[string]any) string {
	r, _ := d["result"].(map[string]any)
	s, _ := r["event"].(string)
	return s
}

func waitResult(t *testing.T, h *janusclient.Handle, name string) map[string]any {
	t.Helper()
	var seen []string
	deadline := time.After(15 * time.Second)
	for {
		select {
		case ev := <-h.Events():
			var d map[string]any
			if ev.PluginData == nil || json.Unmarshal(ev.PluginData.Data, &d) != nil {
				continue
			}
			if result(d) == name {
				return d
			}
			seen = append(seen, string(ev.PluginData.Data))
		case <-deadline:
			t.Fatalf("no %s event; saw %v", name, seen)
		}
	}
}

// TestCallToSippEcho: a guest calls a sipp UAS with RTP echo: calling, ringing, accepted with the
// browser's answer; the audio it sends comes back through the bridge; hangup sends a BYE that
// sipp answers (its scenario ends successfully).
func TestCallToSippEcho(t *testing.T) {
	sp := runSipp(t, "-sf", "uas_echo.xml", "-rtp_echo")
	dir := t.TempDir()
	h := startStrataIn(t, dir)
	data, _ := janustest.MustRequest(t, h, map[string]any{"request": "register", "type": "guest", "username": "sip:alice@127.0.0.1"}, nil)
	if result(data) != "registered" {
		t.Fatalf("register: %v", data)
	}
	ph := newPhone(t)
	offer, err := ph.pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	jsep := janustest.CompleteLocal(t, ph.pc, offer)
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "call", "uri": "sip:service@127.0.0.1:" + strconv.Itoa(sp.Port)}, jsep)
	if result(data) != "calling" {
		t.Fatalf("call: %v", data)
	}
	waitResult(t, h, "ringing")
	_, answer := waitJSEP(t, h, "accepted")
	if err := ph.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ph.talk(ctx)
	ph.waitEcho(t, 25)
	recordBothSides(t, h, dir)
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "hangup"}, nil)
	if result(data) != "hangingup" {
		t.Fatalf("hangup: %v", data)
	}
	waitResult(t, h, "hangup")
	sp.Wait(t, sippDone)
}

// waitJSEP waits for the event name and returns it with its JSEP (which it must have).
func waitJSEP(t *testing.T, h *janusclient.Handle, name string) (map[string]any, *janusclient.JSEP) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case ev := <-h.Events():
			var d map[string]any
			if ev.PluginData == nil || json.Unmarshal(ev.PluginData.Data, &d) != nil || result(d) != name {
				continue
			}
			if ev.JSEP == nil {
				t.Fatalf("%s without a JSEP: %v", name, d)
			}
			return d, ev.JSEP
		case <-deadline:
			t.Fatalf("no %s event", name)
		}
	}
}

// TestIncomingCallBusyAndRemoteHangup: strata registers at sipp, which calls it back: incomingcall
// with a PCMU offer, the browser's answer in accept (200 OK, ACKed), audio echoed by sipp; a second
// INVITE while in the call gets 486 and is reported as missed_call; sipp's BYE ends the call with
// a hangup event.
func TestIncomingCallBusyAndRemoteHangup(t *testing.T) {
	sp := runSipp(t, "-sf", "incoming_call.xml", "-rtp_echo")
	h := startStrata(t)
	data, _ := janustest.MustRequest(t, h, map[string]any{"request": "register", "username": "sip:alice@strata.test",
		"secret": "unused", "proxy": "sip:127.0.0.1:" + strconv.Itoa(sp.Port)}, nil)
	if result(data) != "registering" {
		t.Fatalf("register: %v", data)
	}
	waitResult(t, h, "registered")
	call, offer := waitJSEP(t, h, "incomingcall")
	r := call["result"].(map[string]any)
	if r["username"] != "sip:bob@127.0.0.1:"+strconv.Itoa(sp.Port) || r["displayname"] != "Bob" || call["call_id"] == nil {
		t.Errorf("incomingcall %v", call)
	}
	ph := newPhone(t)
	if err := ph.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		t.Fatal(err)
	}
	answer, err := ph.pc.CreateAnswer(nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "accept"}, janustest.CompleteLocal(t, ph.pc, answer))
	if result(data) != "accepted" {
		t.Fatalf("accept: %v", data)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ph.talk(ctx)
	missed := waitResult(t, h, "missed_call")
	if m := missed["result"].(map[string]any); m["displayname"] != "Carol" {
		t.Errorf("missed_call %v", missed)
	}
	ph.waitEcho(t, 25)
	hangup := waitResult(t, h, "hangup")
	if m := hangup["result"].(map[string]any); m["code"] != float64(200) {
		t.Errorf("hangup %v", hangup)
	}
	sp.Wait(t, sippDone)
}

// callSipp registers a guest (or an account when creds are given) and calls uri with a fresh phone;
// it returns the phone once calling was acknowledged.
func callSipp(t *testing.T, h *janusclient.Handle, uri string, extra map[string]any) *phone {
	t.Helper()
	data, _ := janustest.MustRequest(t, h, map[string]any{"request": "register", "type": "guest", "username": "sip:alice@strata.test"}, nil)
	if result(data) != "registered" {
		t.Fatalf("register: %v", data)
	}
	ph := newPhone(t)
	offer, err := ph.pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"request": "call", "uri": uri}
	for k, v := range extra {
		body[k] = v
	}
	data, _ = janustest.MustRequest(t, h, body, janustest.CompleteLocal(t, ph.pc, offer))
	if result(data) != "calling" {
		t.Fatalf("call: %v", data)
	}
	return ph
}

// TestCallWithDigestAuthOverTCP: the INVITE is challenged (401) and sent again with the
// credentials of the call request (a guest's secret), over TCP; audio flows; hangup.
func TestCallWithDigestAuthOverTCP(t *testing.T) {
	sp := runSipp(t, "-sf", "uas_auth.xml", "-t", "t1", "-rtp_echo")
	h := startStrata(t)
	ph := callSipp(t, h, "sip:service@127.0.0.1:"+strconv.Itoa(sp.Port)+";transport=tcp",
		map[string]any{"secret": "secret", "authuser": "alice"})
	waitResult(t, h, "ringing")
	_, answer := waitJSEP(t, h, "accepted")
	if err := ph.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ph.talk(ctx)
	ph.waitEcho(t, 25)
	janustest.MustRequest(t, h, map[string]any{"request": "hangup"}, nil)
	waitResult(t, h, "hangup")
	sp.Wait(t, sippDone)
}

// TestHangupWhileRingingCancels: hangup before the answer sends a CANCEL; the call ends with 487.
func TestHangupWhileRingingCancels(t *testing.T) {
	sp := runSipp(t, "-sf", "uas_cancel.xml")
	h := startStrata(t)
	callSipp(t, h, "sip:service@127.0.0.1:"+strconv.Itoa(sp.Port), nil)
	waitResult(t, h, "ringing")
	janustest.MustRequest(t, h, map[string]any{"request": "hangup"}, nil)
	ev := waitResult(t, h, "hangup")
	if r := ev["result"].(map[string]any); r["code"] != float64(487) {
		t.Errorf("hangup %v, want 487", ev)
	}
	sp.Wait(t, sippDone)
}

// TestInDialogRequestsAndRemoteHangup: in an established call, hold (a sendonly re-INVITE),
// dtmf_info (INFO), message (MESSAGE), unhold (sendrecv) and transfer (REFER) reach the sipp UAS as
// it expects; its INFO is reported as info, its REFER as transfer; its BYE ends the call.
func TestInDialogRequestsAndRemoteHangup(t *testing.T) {
	sp := runSipp(t, "-sf", "uas_indialog.xml")
	h := startStrata(t)
	ph := callSipp(t, h, "sip:service@127.0.0.1:"+strconv.Itoa(sp.Port), nil)
	_, answer := waitJSEP(t, h, "accepted")
	if err := ph.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"request": "hold"}, "holding"},
		{map[string]any{"request": "dtmf_info", "digit": "5", "duration": 200}, "dtmfsent"},
		{map[string]any{"request": "message", "content": "hello"}, "messagesent"},
		{map[string]any{"request": "unhold"}, "resuming"},
		{map[string]any{"request": "transfer", "uri": "sip:carol@example.com"}, "transferring"},
	} {
		data, _ := janustest.MustRequest(t, h, step.body, nil)
		if result(data) != step.want {
			t.Fatalf("%v: %v, want %s", step.body["request"], data, step.want)
		}
		if step.want == "messagesent" {
			if d := waitResult(t, h, "messagedelivery"); d["result"].(map[string]any)["code"] != float64(200) {
				t.Fatalf("messagedelivery %v", d)
			}
		}
	}
	info := waitResult(t, h, "info")
	if r := info["result"].(map[string]any); r["content"] != "ping" || r["type"] != "text/plain" {
		t.Errorf("info %v", info)
	}
	transfer := waitResult(t, h, "transfer")
	if r := transfer["result"].(map[string]any); r["refer_to"] != "sip:dave@example.com" || r["refer_id"] == nil {
		t.Errorf("transfer %v", transfer)
	}
	waitResult(t, h, "hangup")
	sp.Wait(t, sippDone)
}

// TestIncomingCallDeclined: progress sends the browser's answer in a 183 (early media), decline
// with a code answers the INVITE with it (sipp expects both).
func TestIncomingCallDeclined(t *testing.T) {
	sp := runSipp(t, "-sf", "declined_call.xml")
	h := startStrata(t)
	janustest.MustRequest(t, h, map[string]any{"request": "register", "username": "sip:alice@strata.test",
		"secret": "unused", "proxy": "sip:127.0.0.1:" + strconv.Itoa(sp.Port)}, nil)
	waitResult(t, h, "registered")
	_, offer := waitJSEP(t, h, "incomingcall")
	ph := newPhone(t)
	if err := ph.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		t.Fatal(err)
	}
	answer, err := ph.pc.CreateAnswer(nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := janustest.MustRequest(t, h, map[string]any{"request": "progress"}, janustest.CompleteLocal(t, ph.pc, answer))
	if result(data) != "progressing" {
		t.Fatalf("progress: %v", data)
	}
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "decline", "code": 603}, nil)
	if result(data) != "declining" {
		t.Fatalf("decline: %v", data)
	}
	if ev := waitResult(t, h, "hangup"); ev["result"].(map[string]any)["code"] != float64(603) {
		t.Errorf("hangup %v", ev)
	}
	sp.Wait(t, sippDone)
}

// TestIncomingReinviteToTheBrowser: with autoaccept_reinvites false (as Janus's siptest accepts),
// the peer's re-INVITE reaches the browser as updatingcall with a JSEP offer; its answer in update
// becomes the 200 OK's SDP, which sipp checks and ACKs.
func TestIncomingReinviteToTheBrowser(t *testing.T) {
	sp := runSipp(t, "-sf", "incoming_reinvite.xml")
	h := startStrata(t)
	janustest.MustRequest(t, h, map[string]any{"request": "register", "username": "sip:alice@strata.test",
		"secret": "unused", "proxy": "sip:127.0.0.1:" + strconv.Itoa(sp.Port)}, nil)
	waitResult(t, h, "registered")
	_, offer := waitJSEP(t, h, "incomingcall")
	ph := newPhone(t)
	answer := func(offer *janusclient.JSEP) *janusclient.JSEP {
		if err := ph.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
			t.Fatal(err)
		}
		a, err := ph.pc.CreateAnswer(nil)
		if err != nil {
			t.Fatal(err)
		}
		return janustest.CompleteLocal(t, ph.pc, a)
	}
	data, _ := janustest.MustRequest(t, h, map[string]any{"request": "accept", "autoaccept_reinvites": false}, answer(offer))
	if result(data) != "accepted" {
		t.Fatalf("accept: %v", data)
	}
	_, reoffer := waitJSEP(t, h, "updatingcall")
	data, _ = janustest.MustRequest(t, h, map[string]any{"request": "update"}, answer(reoffer))
	if result(data) != "updated" {
		t.Fatalf("update: %v", data)
	}
	waitResult(t, h, "hangup")
	sp.Wait(t, sippDone)
}
