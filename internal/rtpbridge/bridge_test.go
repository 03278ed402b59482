package rtpbridge

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
)

// call bridges two browsers through two bridges, as Janus's NoSIP demo does: the caller's offer
// becomes a plain offer, the callee's bridge turns it into an offer for the callee, whose answer
// becomes the plain answer that the caller's bridge turns into the caller's answer.
func call(t *testing.T, caller, callee *browser, a, b *Session) (plainOffer, plainAnswer string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	plainOffer, err := a.FromWebRTC(ctx, caller.offer())
	if err != nil {
		t.Fatal("caller's generate:", err)
	}
	jsepOffer, err := b.FromPlain(ctx, plainOffer, webrtc.SDPTypeOffer)
	if err != nil {
		t.Fatal("callee's process:", err)
	}
	plainAnswer, err = b.FromWebRTC(ctx, callee.answer(jsepOffer))
	if err != nil {
		t.Fatal("callee's generate:", err)
	}
	jsepAnswer, err := a.FromPlain(ctx, plainAnswer, webrtc.SDPTypeAnswer)
	if err != nil {
		t.Fatal("caller's process:", err)
	}
	caller.setAnswer(jsepAnswer)
	return plainOffer, plainAnswer
}

// expectTones waits until each browser hears the other's tone.
func expectTones(t *testing.T, caller, callee *browser) {
	t.Helper()
	waitFor(t, 8*time.Second, "the callee hearing the caller's tone", func() bool { return callee.toneLevel(caller.freq, 1600) > 0.1 })
	waitFor(t, 8*time.Second, "the caller hearing the callee's tone", func() bool { return caller.toneLevel(callee.freq, 1600) > 0.1 })
	if l := callee.toneLevel(callee.freq, 1600); l > 0.05 {
		t.Errorf("the callee hears its own tone (%.2f)", l)
	}
}

func TestTwoBridgesCarryAudioAndVideoBothWays(t *testing.T) {
	for _, mode := range []SRTPMode{SRTPOff, SRTPOptional, SRTPMandatory} {
		t.Run([]string{"rtp", "sdes_optional", "sdes_mandatory"}[mode], func(t *testing.T) {
			f := testFactory(t)
			a := newBridge(t, f, loopback, Options{SRTP: mode})
			b := newBridge(t, f, loopback, Options{})
			caller, callee := newBrowser(t, 440, true), newBrowser(t, 1000, true)
			offer, answer := call(t, caller, callee, a, b)
			if mode != SRTPOff != strings.Contains(offer, "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:") {
				t.Fatalf("offer with srtp %v:\n%s", mode, offer)
			}
			if mode == SRTPMandatory != strings.Contains(offer, "RTP/SAVP") {
				t.Fatalf("offer with srtp %v:\n%s", mode, offer)
			}
			if mode != SRTPOff != strings.Contains(answer, "a=crypto:1 AES_CM_128_HMAC_SHA1_80") {
				t.Fatalf("answer to srtp %v:\n%s", mode, answer)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			caller.send(ctx)
			callee.send(ctx)
			expectTones(t, caller, callee)
			waitFor(t, 5*time.Second, "video both ways", func() bool {
				return caller.videoFrames.Load() > 20 && callee.videoFrames.Load() > 20
			})
			st := a.Stats()
			if st.Audio.Codec != "pcmu" || st.Video.Codec != "vp8" || st.Audio.ToPlain.Packets == 0 || st.Audio.FromPlain.Packets == 0 ||
				st.Video.FromPlain.Packets == 0 || st.SRTP != (mode != SRTPOff) {
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
	caller, callee := newBrowser(t, 440, false), newBrowser(t, 1000, false)
	call(t, caller, callee, a, b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caller.send(ctx)
	callee.send(ctx)
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
	waitFor(t, 5*time.Second, "the digits", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return got[b] == "12#" && got[a] == "*9"
	})
	// Telephone-events are the plain side's: the browsers' audio stays PCMU.
	caller.mu.Lock()
	defer caller.mu.Unlock()
	if len(caller.audioPTs) != 1 {
		t.Errorf("the caller received payload types %v", caller.audioPTs)
	}
}

func TestHoldStopsMediaToThePlainPeer(t *testing.T) {
	f := testFactory(t)
	a := newBridge(t, f, loopback, Options{})
	b := newBridge(t, f, loopback, Options{})
	caller, callee := newBrowser(t, 440, false), newBrowser(t, 1000, false)
	call(t, caller, callee, a, b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caller.send(ctx)
	callee.send(ctx)
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
		answer, err := b.FromWebRTC(bg, callee.answer(jsep))
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
