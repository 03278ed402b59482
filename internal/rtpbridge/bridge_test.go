package rtpbridge

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/rtpbridge/bridgetest"
)

// call bridges two browsers through two bridges, as Janus's NoSIP demo does: the caller's offer
// becomes a plain offer, the callee's bridge turns it into an offer for the callee, whose answer
// becomes the plain answer that the caller's bridge turns into the caller's answer.
func call(t *testing.T, caller, callee *bridgetest.Browser, a, b *Session) (plainOffer, plainAnswer string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	plainOffer, err := a.FromWebRTC(ctx, caller.Offer())
	if err != nil {
		t.Fatal("caller's generate:", err)
	}
	jsepOffer, err := b.FromPlain(ctx, plainOffer, webrtc.SDPTypeOffer)
	if err != nil {
		t.Fatal("callee's process:", err)
	}
	plainAnswer, err = b.FromWebRTC(ctx, callee.Answer(jsepOffer))
	if err != nil {
		t.Fatal("callee's generate:", err)
	}
	jsepAnswer, err := a.FromPlain(ctx, plainAnswer, webrtc.SDPTypeAnswer)
	if err != nil {
		t.Fatal("caller's process:", err)
	}
	caller.SetAnswer(jsepAnswer)
	return plainOffer, plainAnswer
}

// expectTones waits until each browser hears the other's tone in fresh audio (400 ms of it
// arrived since the call).
func expectTones(t *testing.T, caller, callee *bridgetest.Browser) {
	t.Helper()
	c0, e0 := caller.Samples(), callee.Samples()
	bridgetest.WaitFor(t, 8*time.Second, "the callee hearing the caller's tone", func() bool {
		return callee.Samples() > e0+3200 && callee.ToneLevel(caller.Freq, 1600) > 0.1
	})
	bridgetest.WaitFor(t, 8*time.Second, "the caller hearing the callee's tone", func() bool {
		return caller.Samples() > c0+3200 && caller.ToneLevel(callee.Freq, 1600) > 0.1
	})
	if l := callee.ToneLevel(callee.Freq, 1600); l > 0.05 {
		t.Errorf("the callee hears its own tone (%.2f)", l)
	}
}

func TestTwoBridgesCarryAudioAndVideoBothWays(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    SRTPMode
		profile string
	}{
		{"rtp", SRTPOff, ""}, {"sdes_optional", SRTPOptional, ""}, {"sdes_mandatory", SRTPMandatory, ""},
		{"sdes_optional_32", SRTPOptional, ProfileAES32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := testFactory(t)
			a := newBridge(t, f, loopback, Options{SRTP: tc.mode, SRTPProfile: tc.profile})
			b := newBridge(t, f, loopback, Options{})
			caller, callee := bridgetest.NewBrowser(t, 440, true), bridgetest.NewBrowser(t, 1000, true)
			offer, answer := call(t, caller, callee, a, b)
			suite := "AES_CM_128_HMAC_SHA1_80"
			if tc.profile != "" {
				suite = tc.profile
			}
			secure := tc.mode != SRTPOff
			if secure != strings.Contains(offer, "a=crypto:1 "+suite+" inline:") {
				t.Fatalf("offer with srtp %v:\n%s", tc.mode, offer)
			}
			if tc.mode == SRTPMandatory != strings.Contains(offer, "RTP/SAVP") {
				t.Fatalf("offer with srtp %v:\n%s", tc.mode, offer)
			}
			if secure != strings.Contains(answer, "a=crypto:1 "+suite) {
				t.Fatalf("answer to srtp %v:\n%s", tc.mode, answer)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			caller.Send(ctx)
			callee.Send(ctx)
			expectTones(t, caller, callee)
			bridgetest.WaitFor(t, 5*time.Second, "video both ways", func() bool {
				return caller.VideoFrames.Load() > 20 && callee.VideoFrames.Load() > 20
			})
			st := a.Stats()
			if st.Audio.Codec != "pcmu" || st.Video.Codec != "vp8" || st.Audio.ToPlain.Packets == 0 || st.Audio.FromPlain.Packets == 0 ||
				st.Video.FromPlain.Packets == 0 || st.SRTP != secure {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestDTMFBothWays(t *testing.T) {
	f := testFactory(t)
	a := newBridge(t, f, loopback, Options{})
	b := newBridge(t, f, loopback, Options{})
	var mu sync.Mutex
	got := map[*Session]string{}
	for _, s := range []*Session{a, b} {
		s.OnDTMF(func(d string, dur time.Duration) {
			mu.Lock()
			got[s] += d
			mu.Unlock()
			if dur < 60*time.Millisecond || dur > 400*time.Millisecond {
				t.Errorf("digit %s lasted %v", d, dur)
			}
		})
	}
	caller, callee := bridgetest.NewBrowser(t, 440, false), bridgetest.NewBrowser(t, 1000, false)
	call(t, caller, callee, a, b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caller.Send(ctx)
	callee.Send(ctx)
	expectTones(t, caller, callee)
	if err := a.SendDTMF("12#", 0); err != nil {
		t.Fatal(err)
	}
	if err := b.SendDTMF("*9", 150*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := a.SendDTMF("1x", 0); err == nil {
		t.Error("an invalid digit was accepted")
	}
	bridgetest.WaitFor(t, 5*time.Second, "the digits", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return got[b] == "12#" && got[a] == "*9"
	})
	// The browser's own telephone-events (RTCDTMFSender) reach the plain side as they are.
	if !caller.SendDTMF(7) {
		t.Fatal("the caller's browser has no telephone-event")
	}
	bridgetest.WaitFor(t, 3*time.Second, "the browser's digit", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return got[b] == "12#7"
	})
	// The plain side's telephone-events reach the browsers too, in their audio stream with
	// their payload type (as Janus relays them): each bridge's digits were the other's plain
	// peer's.
	bridgetest.WaitFor(t, 3*time.Second, "the digits in the browsers", func() bool {
		return string(caller.Events()) == "\x0a\x09" && string(callee.Events()) == "\x01\x02\x0b\x07"
	})
	if pts := caller.AudioPayloadTypes(); len(pts) != 2 || pts[0] == 0 || pts[126] == 0 {
		t.Errorf("the caller received payload types %v", pts)
	}
}

func TestHoldStopsMediaToThePlainPeer(t *testing.T) {
	f := testFactory(t)
	a := newBridge(t, f, loopback, Options{})
	b := newBridge(t, f, loopback, Options{})
	caller, callee := bridgetest.NewBrowser(t, 440, false), bridgetest.NewBrowser(t, 1000, false)
	call(t, caller, callee, a, b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caller.Send(ctx)
	callee.Send(ctx)
	expectTones(t, caller, callee)
	bg := context.Background()
	for _, dir := range []Direction{Inactive, SendRecv} {
		reoffer, err := a.Hold(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(reoffer, "a="+string(dir)) {
			t.Fatalf("hold re-offer:\n%s", reoffer)
		}
		jsep, err := b.FromPlain(bg, reoffer, webrtc.SDPTypeOffer)
		if err != nil {
			t.Fatal(err)
		}
		answer, err := b.FromWebRTC(bg, callee.Answer(jsep))
		if err != nil {
			t.Fatal(err)
		}
		want := map[Direction]string{Inactive: "a=inactive", SendRecv: "a=sendrecv"}[dir]
		if !strings.Contains(answer, want) {
			t.Fatalf("answer to %s:\n%s", dir, answer)
		}
		if j, err := a.FromPlain(bg, answer, webrtc.SDPTypeAnswer); err != nil || j != nil {
			t.Fatalf("hold answer: %v %v", j, err)
		}
		before := a.Stats().Audio.ToPlain.Packets
		time.Sleep(300 * time.Millisecond)
		sent := a.Stats().Audio.ToPlain.Packets - before
		if dir == Inactive && sent != 0 || dir == SendRecv && sent < 5 {
			t.Errorf("%s: %d packets sent to the plain peer in 300 ms", dir, sent)
		}
	}
	expectTones(t, caller, callee)
}

// TestRenegotiationKeepsTheCall: the caller's browser re-offers (Janus's "update", an ICE restart
// or a track change) and the whole chain negotiates again through both bridges; the media goes on.
func TestRenegotiationKeepsTheCall(t *testing.T) {
	f := testFactory(t)
	a := newBridge(t, f, loopback, Options{SRTP: SRTPOptional})
	b := newBridge(t, f, loopback, Options{})
	caller, callee := bridgetest.NewBrowser(t, 440, true), bridgetest.NewBrowser(t, 1000, true)
	call(t, caller, callee, a, b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caller.Send(ctx)
	callee.Send(ctx)
	expectTones(t, caller, callee)
	offer, _ := call(t, caller, callee, a, b)
	if !strings.Contains(offer, "PCMU/8000") || strings.Contains(offer, "PCMA") || !strings.Contains(offer, "a=crypto:") {
		t.Errorf("re-offer with the codec in use and the key:\n%s", offer)
	}
	before := callee.VideoFrames.Load()
	expectTones(t, caller, callee)
	bridgetest.WaitFor(t, 3*time.Second, "video after the re-negotiation", func() bool { return callee.VideoFrames.Load() > before+10 })
}

// TestRepeatedAnswerIsAccepted: a SIP call's 183 and 200 OK carry the same answer; the second
// changes nothing for the browser.
func TestRepeatedAnswerIsAccepted(t *testing.T) {
	f := testFactory(t)
	a := newBridge(t, f, loopback, Options{})
	b := newBridge(t, f, loopback, Options{})
	caller, callee := bridgetest.NewBrowser(t, 440, false), bridgetest.NewBrowser(t, 1000, false)
	_, answer := call(t, caller, callee, a, b)
	if j, err := a.FromPlain(context.Background(), answer, webrtc.SDPTypeAnswer); err != nil || j != nil {
		t.Fatalf("the answer again: %v %v", j, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caller.Send(ctx)
	callee.Send(ctx)
	expectTones(t, caller, callee)
}
