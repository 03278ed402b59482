package siplab

import (
	"strings"
	"testing"
	"time"
)

// TestBaresipCallsThroughKamailio checks the rig itself, without strata: two baresips register
// with digest authentication, one calls the other through the proxy, each hears the other's tone,
// DTMF in RTP and hold/resume pass through the proxy's record-route, and the callee hangs up.
func TestBaresipCallsThroughKamailio(t *testing.T) {
	lab := Start(t, Options{})
	a := lab.NewBaresip(lab.Users[0], UAOptions{ToneHz: 440})
	b := lab.NewBaresip(lab.Users[1], UAOptions{ToneHz: 1000})

	if err := a.Dial(b.URI); err != nil {
		t.Fatal(err)
	}
	for _, ua := range []*Baresip{a, b} {
		if _, err := ua.Wait("CALL_ESTABLISHED", 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(lab.KamailioLog(), "challenging user1 for INVITE") {
		t.Errorf("kamailio did not challenge the INVITE")
	}
	time.Sleep(2 * time.Second)
	checkTone(t, "b hears a", b, 440, 1000)
	checkTone(t, "a hears b", a, 1000, 440)

	if err := a.SendDTMF("19#"); err != nil {
		t.Fatal(err)
	}
	var got string
	for range 3 {
		ev, err := b.Wait("CALL_DTMF_START", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got += ev.Param
	}
	if got != "19#" {
		t.Errorf("b received DTMF %q, want 19#", got)
	}

	if err := a.Hold(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Wait("CALL_REMOTE_SDP", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := a.Resume(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Wait("CALL_REMOTE_SDP", 5*time.Second); err != nil {
		t.Fatal(err)
	}

	if err := b.Hangup(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Wait("CALL_CLOSED", 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// checkTone asserts that ua's received audio over the last second holds the tone want and not the
// tone it sends itself (no echo, no loopback).
func checkTone(t *testing.T, what string, ua *Baresip, want, own float64) {
	t.Helper()
	pcm, err := ua.Received()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	lw, lo := pcm.ToneLevel(want, 1), pcm.ToneLevel(own, 1)
	t.Logf("%s: %.1f s at %d Hz×%d, level at %.0f Hz %.3f, at %.0f Hz %.3f", what, pcm.Duration(), pcm.Rate, pcm.Channels, want, lw, own, lo)
	if lw < 0.1 || lo > lw/10 {
		t.Errorf("%s: tone %.0f Hz level %.3f (own %.0f Hz %.3f): not heard", what, want, lw, own, lo)
	}
}

// TestSippEchoesBaresip checks the sipp helper: baresip calls sipp's UAS directly, hears its own
// tone echoed back in RTP, hangs up, and sipp counts one successful call.
func TestSippEchoesBaresip(t *testing.T) {
	lab := Start(t, Options{Users: 1})
	echo := lab.StartEchoUAS("echo", 1)
	ua := lab.NewBaresip(lab.Users[0], UAOptions{ToneHz: 700})
	if err := ua.Dial(echo.URI("echo")); err != nil {
		t.Fatal(err)
	}
	if _, err := ua.Wait("CALL_ESTABLISHED", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	checkTone(t, "baresip hears its echo", ua, 700, 0)
	if err := ua.Hangup(); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := echo.Wait(5 * time.Second); err != nil {
		t.Fatalf("%v\n%s", err, echo.Log())
	}
	t.Logf("sipp exited after %v", time.Since(t0))
}
