package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/siplab"
)

// The SIP tests run strata's janus.plugin.sip against real SIP software from Debian, each in its
// own network namespace (internal/siplab): kamailio as registrar and proxy with digest
// authentication, baresip as the phone at the other end. The WebRTC side is a Pion client that
// sends a tone and decodes what it receives; baresip plays another tone and records what it
// hears, so the audio is checked both ways. With STRATA_E2E_SIP=janus the same tests run against
// Debian's Janus 1.1.2 and its SIP plugin instead: what passes there is what Janus does.
const sipTargetEnv = "STRATA_E2E_SIP"

// Tones of the two ends, apart enough for the Goertzel levels not to leak into each other.
const (
	webTone   = 440.0
	phoneTone = 1000.0
)

// startSIPServer starts the server under test in the root namespace with its SIP and RTP on the
// lab's network, and returns its WebSocket API.
func startSIPServer(t *testing.T, lab *siplab.Lab) string {
	t.Helper()
	switch target := os.Getenv(sipTargetEnv); target {
	case "", "strata":
		return startStrataSIP(t, lab)
	case "janus":
		s := startJanus(t, sipTargetEnv, "libjanus_sip.so", map[string]string{
			"janus.plugin.sip.jcfg": fmt.Sprintf(`general: {
	local_ip = "%s"
	keepalive_interval = 0
	behind_nat = false
	register_ttl = 3600
	rtp_port_range = "30000-39999"
	sip_timer_t1x64 = 32000
}
`, lab.HostIP)})
		return s.WSAPI
	default:
		t.Fatalf("%s=%q: want strata or janus", sipTargetEnv, target)
		return ""
	}
}

// sipCall is a WebRTC phone registered through the lab's proxy and a baresip to talk to.
type sipCall struct {
	lab   *siplab.Lab
	web   *webPhone
	phone *siplab.Baresip
}

func newSIPCall(t *testing.T, o siplab.UAOptions) *sipCall {
	lab := siplab.Start(t, siplab.Options{Users: 2})
	api := startSIPServer(t, lab)
	if o.ToneHz == 0 {
		o.ToneHz = phoneTone
	}
	c := &sipCall{lab: lab, phone: lab.NewBaresip(lab.Users[1], o)}
	c.web = newWebPhone(t, api, webTone)
	c.web.register(lab, lab.Users[0])
	return c
}

// callOut calls the baresip from the WebRTC phone (srtp: "", "sdes_optional" or "sdes_mandatory").
func (c *sipCall) callOut(t *testing.T, srtp string) {
	t.Helper()
	body := map[string]any{"request": "call", "uri": c.phone.URI}
	if srtp != "" {
		body["srtp"] = srtp
	}
	c.web.mustRequest(body, c.web.offer())
	acc := c.web.waitEvent("accepted", 10*time.Second)
	c.web.setRemote(jsepOf(t, acc))
	if _, err := c.phone.Wait("CALL_ESTABLISHED", 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// callIn has the baresip call the WebRTC phone, which accepts.
func (c *sipCall) callIn(t *testing.T) {
	t.Helper()
	if err := c.phone.Dial(c.lab.URI(c.lab.Users[0])); err != nil {
		t.Fatal(err)
	}
	in := c.web.waitEvent("incomingcall", 10*time.Second)
	if res := in["result"].(map[string]any); !strings.Contains(fmt.Sprint(res["username"]), c.phone.User.Name) {
		t.Errorf("incomingcall from %v, want %s", res["username"], c.phone.User.Name)
	}
	c.web.mustRequest(map[string]any{"request": "accept"}, c.web.answer(jsepOf(t, in)))
	c.web.waitEvent("accepted", 10*time.Second)
	if _, err := c.phone.Wait("CALL_ESTABLISHED", 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// checkAudioBothWays waits until each side has heard the other's tone for a second of new audio.
func (c *sipCall) checkAudioBothWays(t *testing.T) {
	t.Helper()
	var webLevel, phoneLevel, own, phoneGot float64
	webStart, phoneStart := c.web.received(), c.phoneReceived()
	deadline := time.Now().Add(6 * time.Second)
	for {
		time.Sleep(500 * time.Millisecond)
		webLevel, _ = c.web.heard(phoneTone)
		own, _ = c.web.heard(webTone)
		pcm, err := c.phone.Received()
		if err == nil {
			phoneLevel, phoneGot = pcm.ToneLevel(webTone, 1), pcm.Duration()-phoneStart
		}
		// a full second of new audio each way, so that what is measured was sent now
		fresh := c.web.received()-webStart >= 1 && phoneGot >= 1
		if (fresh && webLevel > 0.05 && phoneLevel > 0.05) || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("the WebRTC phone hears baresip's %.0f Hz at %.3f (its own %.0f Hz at %.3f) over %.1f s new; baresip hears %.0f Hz at %.3f over %.1f s new",
		phoneTone, webLevel, webTone, own, c.web.received()-webStart, webTone, phoneLevel, phoneGot)
	if c.web.received()-webStart < 1 || webLevel <= 0.05 {
		t.Errorf("the WebRTC phone does not hear baresip's %.0f Hz", phoneTone)
	}
	if phoneGot < 1 || phoneLevel <= 0.05 {
		t.Errorf("baresip does not hear the WebRTC phone's %.0f Hz", webTone)
	}
}

// checkResumed checks that audio flows both ways again after a hold: the WebRTC phone hears the
// tone in a second of new audio, and baresip receives RTP again (its recorder stopped at the
// re-INVITE, see siplab.Baresip.Received, so its packet count stands in for its ears).
func (c *sipCall) checkResumed(t *testing.T) {
	t.Helper()
	webStart := c.web.received()
	rtpStart, err := c.phone.RTPReceived()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 6*time.Second, func() bool {
		l, _ := c.web.heard(phoneTone)
		return c.web.received()-webStart >= 1 && l > 0.05
	}, func() string {
		l, _ := c.web.heard(phoneTone)
		return fmt.Sprintf("after the hold the WebRTC phone got %.1f s of new audio, %.0f Hz at %.3f", c.web.received()-webStart, phoneTone, l)
	})
	rtp, err := c.phone.RTPReceived()
	if err != nil {
		t.Fatal(err)
	}
	l, _ := c.web.heard(phoneTone)
	t.Logf("resumed: the WebRTC phone hears %.0f Hz at %.3f; baresip received %d RTP packets in %.1f s", phoneTone, l, rtp-rtpStart, c.web.received()-webStart)
	if rtp-rtpStart < 25 {
		t.Errorf("after the hold baresip received %d RTP packets in a second", rtp-rtpStart)
	}
}

// phoneReceived is how many seconds baresip has recorded in its current call.
func (c *sipCall) phoneReceived() float64 {
	pcm, err := c.phone.Received()
	if err != nil {
		return 0
	}
	return pcm.Duration()
}

// checkHeld checks that no audio arrives on either side while the call is on hold.
func (c *sipCall) checkHeld(t *testing.T) {
	t.Helper()
	web := c.web.received()
	phone, err := c.phone.RTPReceived()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	web = c.web.received() - web
	if n, err := c.phone.RTPReceived(); err == nil {
		phone = n - phone
	}
	t.Logf("on hold for 1 s: the WebRTC phone received %.2f s of audio, baresip %d RTP packets", web, phone)
	if web > 0.2 {
		t.Errorf("the WebRTC phone received %.2f s of audio from baresip in 1 s on hold", web)
	}
}

// checkDTMF checks DTMF each way, as subtests so that a missing direction is named and the call
// goes on: toPhone from the browser as RFC 4733 events in its RTP, a "#" with dtmf_info (SIP
// INFO), and fromPhone from baresip as RFC 4733 events, which reach the browser as
// telephone-event packets (Janus relays them).
func (c *sipCall) checkDTMF(t *testing.T, toPhone, fromPhone string) {
	t.Helper()
	phoneGets := func(t *testing.T, want string) {
		var got string
		for range len(want) {
			ev, err := c.phone.Wait("CALL_DTMF_START", 5*time.Second)
			if err != nil {
				break
			}
			got += ev.Param
		}
		if got != want {
			t.Errorf("baresip received DTMF %q, want %q", got, want)
		}
	}
	t.Run("RTPToPhone", func(t *testing.T) {
		c.web.sendDTMF(toPhone)
		phoneGets(t, toPhone)
	})
	t.Run("INFOToPhone", func(t *testing.T) {
		d, err := c.web.request(map[string]any{"request": "dtmf_info", "digit": "#", "duration": 160}, nil)
		if err != nil || d["error_code"] != nil {
			t.Fatalf("dtmf_info: %v %v", err, d)
		}
		phoneGets(t, "#")
	})
	t.Run("RTPFromPhone", func(t *testing.T) {
		if err := c.phone.SendDTMF(fromPhone); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(5 * time.Second); !strings.Contains(c.web.digits(), fromPhone) && time.Now().Before(end); {
			time.Sleep(50 * time.Millisecond)
		}
		if got := c.web.digits(); !strings.Contains(got, fromPhone) {
			t.Errorf("the WebRTC phone received telephone-events %q, want %q", got, fromPhone)
		}
	})
}

// TestSIPCallOut: the WebRTC phone registers with digest authentication, calls baresip through
// the proxy, both hear each other, DTMF goes both ways in RTP (RFC 4733) and as SIP INFO, the call
// is held and resumed, and the WebRTC phone hangs up.
func TestSIPCallOut(t *testing.T) {
	c := newSIPCall(t, siplab.UAOptions{})
	c.callOut(t, "")
	for _, m := range []string{"REGISTER", "INVITE"} {
		if want := "challenging " + c.lab.Users[0].Name + " for " + m; !strings.Contains(c.lab.KamailioLog(), want) {
			t.Errorf("kamailio's log has no %q: the %s was not digest-authenticated", want, m)
		}
	}
	c.checkAudioBothWays(t)

	c.checkDTMF(t, "12", "47")

	// Hold and resume from the WebRTC side: baresip gets the re-INVITEs and the call carries on.
	c.web.mustRequest(map[string]any{"request": "hold"}, nil)
	c.web.waitEvent("holding", 5*time.Second)
	if _, err := c.phone.Wait("CALL_REMOTE_SDP", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c.checkHeld(t)
	c.web.mustRequest(map[string]any{"request": "unhold"}, nil)
	c.web.waitEvent("resuming", 5*time.Second)
	if _, err := c.phone.Wait("CALL_REMOTE_SDP", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c.checkResumed(t)

	c.web.mustRequest(map[string]any{"request": "hangup"}, nil)
	c.web.waitEvent("hangup", 5*time.Second)
	if _, err := c.phone.Wait("CALL_CLOSED", 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestSIPCallIn: baresip calls the registered WebRTC phone through the proxy, the phone accepts,
// both hear each other, DTMF goes both ways, baresip holds and resumes, and hangs up.
func TestSIPCallIn(t *testing.T) {
	c := newSIPCall(t, siplab.UAOptions{})
	c.callIn(t)
	c.checkAudioBothWays(t)
	c.checkDTMF(t, "5", "9")

	if err := c.phone.Hold(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := c.phone.Resume(); err != nil {
		t.Fatal(err)
	}
	c.checkResumed(t)

	if err := c.phone.Hangup(); err != nil {
		t.Fatal(err)
	}
	c.web.waitEvent("hangup", 5*time.Second)
}

// TestSIPCallOutSRTP: a call with sdes_mandatory to a baresip that requires SRTP carries audio
// both ways.
func TestSIPCallOutSRTP(t *testing.T) {
	c := newSIPCall(t, siplab.UAOptions{SRTP: true})
	c.callOut(t, "sdes_mandatory")
	c.checkAudioBothWays(t)
	dbg, err := c.phone.AudioDebug()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dbg, "secure=yes") {
		t.Errorf("baresip's call is not encrypted:\n%s", dbg)
	}
	if err := c.phone.Hangup(); err != nil {
		t.Fatal(err)
	}
	c.web.waitEvent("hangup", 5*time.Second)
}

// TestSIPRegisterWrongSecret: a wrong password ends in registration_failed, not registered.
func TestSIPRegisterWrongSecret(t *testing.T) {
	lab := siplab.Start(t, siplab.Options{Users: 1})
	web := newWebPhone(t, startSIPServer(t, lab), webTone)
	web.mustRequest(map[string]any{"request": "register", "username": lab.URI(lab.Users[0]), "secret": "not-" + lab.Users[0].Password,
		"proxy": "sip:" + lab.Registrar}, nil)
	web.waitEvent("registration_failed", 10*time.Second)
}

// TestSIPCallUnknownUser: a call to a user the registrar does not know ends in a hangup with
// the proxy's 404.
func TestSIPCallUnknownUser(t *testing.T) {
	c := newSIPCall(t, siplab.UAOptions{})
	c.web.mustRequest(map[string]any{"request": "call", "uri": "sip:nobody@" + c.lab.Domain}, c.web.offer())
	ev := c.web.waitEvent("hangup", 10*time.Second)
	if res := ev["result"].(map[string]any); fmt.Sprint(res["code"]) != "404" {
		t.Errorf("hangup %v, want code 404 from the proxy", res)
	}
}

// waitFor polls cond until it holds, failing the test with msg() after within.
func waitFor(t *testing.T, within time.Duration, cond func() bool, msg func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(msg())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startStrataSIP starts strata with its SIP plugin on the lab's network: SIP and RTP bound to the
// root namespace's address there, ICE for the WebRTC phone on every interface as a browser's.
func startStrataSIP(t *testing.T, lab *siplab.Lab) string {
	t.Helper()
	srv := startStrata(t, func(c *config.Config) {
		c.Plugins.SIP.Enabled = true
		c.Plugins.SIP.LocalIP = lab.HostIP
		c.Plugins.SIP.SDPIP = lab.HostIP
		c.Plugins.SIP.KeepaliveInterval = 0
		c.Plugins.SIP.RecordingsDir = t.TempDir()
	})
	return "ws://" + srv.WSAddr()
}
