package e2e

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// abTalkRoom is the room TestAudioBridgeDemo creates, with talking events.
const abTalkRoom = 5678

// TestAudioBridgeDemo runs strata's audiobridge demo (web/audiobridge.html with lib/strata.js) in
// two browsers, Alice over HTTP long-poll and Bob over the WebSocket, in a room created with
// talking events (audiolevel_event). Chromium's fake microphone beeps. Checked on the pages: each
// lists the other, set up; each decodes the mix with the other's beep, and its level bars move (its
// own microphone, the room mix); Alice's page gets talking events for Bob and shows him talking;
// Bob's Mute button mutes him in Alice's list and silences Alice's mix, Unmute brings the beep back;
// when Bob leaves he disappears from Alice's list; Leave ends both sessions.
func TestAudioBridgeDemo(t *testing.T) {
	srv := startAudioBridge(t)
	// The fake microphone's beep is loud for a moment and silent in between, several times a second:
	// its RFC 6464 levels (0 loudest, 127 silence) average 80 to 100 over 200 ms blocks, far from the
	// default threshold of 25 for a voice. Blocks of 25 packets (500 ms) averaging below 110 count as
	// talking here, so a beeping participant talks.
	srv.createRoom(t, abTalkRoom, map[string]any{
		"description": "e2e talking", "audiolevel_event": true, "audio_active_packets": 25, "audio_level_average": 110,
	})
	alice, bob := newBrowser(t), newBrowser(t)
	joinAudioDemo(alice, srv.demoPage("audiobridge.html", false)+fmt.Sprintf("&room=%d", abTalkRoom), "alice", "http")
	joinAudioDemo(bob, srv.demoPage("audiobridge.html", true)+fmt.Sprintf("&room=%d", abTalkRoom), "bob", "ws")

	const pc = "window.strataDemo.pc"
	users := []struct {
		b          *browser
		name, peer string
	}{{alice, "alice", "bob"}, {bob, "bob", "alice"}}
	for _, u := range users {
		u.b.waitFor(u.name+"'s page to list "+u.peer+", set up", personJS(u.peer, `p.setup && !p.muted && li.querySelector('.state').textContent !== 'connecting…'`), 10*time.Second)
		requireMixEnergy(u.b, pc, u.peer+"'s beep in the mix "+u.name+"'s page plays", true)
		u.b.waitFor(u.name+"'s level bars to move (microphone and mix)", `(d => d.micLevel > 0 && d.mixLevel > 0
			&& document.querySelector('#people li[data-id="' + d.id + '"] .level > span').style.width !== '0%'
			&& document.querySelector('#people li.mix .level > span').style.width !== '0%')(window.strataDemo)`, 5*time.Second)
	}
	alice.waitFor("Alice's page to show Bob talking", `window.strataDemo.events.some((e) => e.name === 'talking' && e.detail === 'bob')
		&& `+personJS("bob", `p.talking && li.classList.contains('talking')`), 10*time.Second)
	alice.screenshot("audiobridge-demo-alice")
	alice.requireCleanConsole("while joining")
	bob.requireCleanConsole("while joining")

	bob.do(5*time.Second, chromedp.Click(chromedp.ID("mute")))
	bob.waitFor("Bob's button to read Unmute and his row to show him muted",
		`document.getElementById('mute').textContent === 'Unmute' && window.strataDemo.muted
		&& document.querySelector('#people li[data-id="' + window.strataDemo.id + '"]').classList.contains('muted')`, 5*time.Second)
	alice.waitFor("Alice's page to show Bob muted", personJS("bob", `p.muted && li.querySelector('.state').textContent === 'muted'`), 5*time.Second)
	requireMixEnergy(alice, pc, "the mix Alice's page plays with Bob muted", false)
	bob.do(5*time.Second, chromedp.Click(chromedp.ID("mute")))
	alice.waitFor("Alice's page to show Bob unmuted", personJS("bob", `!p.muted`), 5*time.Second)
	requireMixEnergy(alice, pc, "Bob's beep in the mix Alice's page plays after he unmuted", true)

	bob.do(5*time.Second, chromedp.Click(chromedp.ID("start"))) // the button reads Leave now
	bob.waitFor("Bob's page to leave", `window.strataDemo.state === 'idle' && window.strataDemo.session === null`, 10*time.Second)
	alice.waitFor("Bob to leave Alice's list", `![...window.strataDemo.participants.values()].some((p) => p.display === 'bob')
		&& ![...document.querySelectorAll('#people .who')].some((w) => w.textContent === 'bob')`, 5*time.Second)
	alice.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	alice.waitFor("Alice's page to leave", `window.strataDemo.state === 'idle' && window.strataDemo.session === null`, 10*time.Second)
	srv.waitNoSessions(t, 5*time.Second)
	alice.requireCleanConsole("during the call")
	bob.requireCleanConsole("during the call")
}

// joinAudioDemo opens the audiobridge demo at page, fills in the name, clicks Join and waits until
// the page is in the room with its audio up, over the transport it should use.
func joinAudioDemo(b *browser, page, name, transport string) {
	b.t.Helper()
	b.do(10*time.Second, chromedp.Navigate(page))
	b.waitFor("the demo module to load", `window.strataDemo && window.strataDemo.state === 'idle'`, 10*time.Second)
	if _, err := eval[bool](b, fmt.Sprintf(`document.getElementById('display').value = %q; true`, name)); err != nil {
		b.t.Fatalf("filling in the form: %v", err)
	}
	b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	took := b.waitFor(name+" to join with audio up", `['up', 'error'].includes(window.strataDemo.state)`, 15*time.Second)
	if msg, _ := eval[string](b, `window.strataDemo.error || ''`); msg != "" {
		b.t.Fatalf("%s's page failed to join: %s", name, msg)
	}
	if used, err := eval[string](b, `window.strataDemo.session.transport`); err != nil || used != transport {
		b.t.Fatalf("%s's page used transport %q (err %v), want %q", name, used, err, transport)
	}
	b.t.Logf("%s joined over %s, webrtcup %v after clicking Join", name, transport, took.Round(time.Millisecond))
}

// personJS is true once the demo lists a participant named display (p, its state) with a row (li)
// and cond holds for them.
func personJS(display, cond string) string {
	return fmt.Sprintf(`[...window.strataDemo.participants].some(([id, p]) => {
		const li = document.querySelector('#people li[data-id="' + id + '"]');
		return p.display === %q && li && (%s);
	})`, display, cond)
}

// demoPage is the address of one of strata's demo pages for this server: over HTTP long-poll (the
// page finds the API on its own origin) or the WebSocket (whose port the page cannot guess). The
// pages for Janus are served by a test server, so they get the API's address.
func (s *abServer) demoPage(page string, ws bool) string {
	q := url.Values{}
	switch {
	case ws:
		q.Set("transport", "ws")
		q.Set("ws", s.WSAPI)
	case s.Name != "strata":
		q.Set("server", s.HTTPAPI)
	}
	return s.Pages + "/" + page + "?" + q.Encode()
}
