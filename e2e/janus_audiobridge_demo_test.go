package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestJanusAudioBridgeDemo runs Janus's own audiobridge demo (audiobridgetest.html and
// audiobridgetest.js from Debian's janus-demos, unmodified; settings.js as serveJanusDemos fixes
// it) in two browsers, one over HTTP long-poll, one over the WebSocket, as two users would: Start,
// a display name, "Join the room". The demo joins the sample room 1234 and negotiates on its own.
// Checked, on each page: the room panel shows the user's name, the participant list shows the other
// user with the PeerConnection set up and not muted, the mixed audio element plays, and the mix
// decoded from it carries the other's beep; the demo's Mute button mutes the user in the other's
// list, and takes the beep out of the other's mix; no page lists its own user; Stop ends the
// sessions.
func TestJanusAudioBridgeDemo(t *testing.T) {
	srv := startAudioBridge(t)
	alice, bob := newBrowser(t), newBrowser(t)
	users := []struct {
		b    *browser
		name string
		api  string
	}{{alice, "alice", srv.HTTPAPI}, {bob, "bob", srv.WSAPI}}
	for _, u := range users {
		// Debian's page loads bootstrap-slider's script and stylesheet, which Debian does not ship
		// (404s); the demo uses the slider only in rooms with spatial audio.
		u.b.tolerate("/javascript/bootstrap-slider/")
		pages := serveJanusDemos(t, u.api, nil)
		u.b.do(10*time.Second, chromedp.Navigate(pages.URL+"/audiobridgetest.html"))
		u.b.waitFor("Janus.init", `window.Janus && Janus.initDone`, 10*time.Second)
		u.b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
		u.b.waitFor("the plugin to attach (the name form)", `$('#registernow').is(':visible')`, 10*time.Second)
		u.b.do(5*time.Second, chromedp.SendKeys(chromedp.ID("username"), u.name), chromedp.Click(chromedp.ID("register")))
		took := u.b.waitFor(u.name+" in the room with the mix playing", fmt.Sprintf(`$('#room').is(':visible')
			&& $('#participant').text() === %q && (a => a && !a.paused && a.srcObject
			&& a.srcObject.getAudioTracks()[0].readyState === 'live')($('#roomaudio').get(0))`, u.name), 15*time.Second)
		t.Logf("%s is in the room %v after clicking Join", u.name, took.Round(time.Millisecond))
	}

	const pc = "mixertest.webrtcStuff.pc"
	for i, u := range users {
		other := users[1-i].name
		u.b.waitFor(u.name+"'s list to show "+other+", set up and not muted", listedJS(other, true, false), 10*time.Second)
		requireMixEnergy(u.b, pc, other+"'s beep in the mix "+u.name+"'s demo plays", true)
		u.b.requireCleanConsole("while joining")
	}
	alice.screenshot("janus-audiobridge-demo-alice")

	// The demo's Mute button (configure muted) shows in the other's list and empties its mix.
	bob.do(5*time.Second, chromedp.Click(chromedp.ID("toggleaudio")))
	bob.waitFor("the button to read Unmute", `$('#toggleaudio').text() === 'Unmute'`, 5*time.Second)
	alice.waitFor("Alice's list to show Bob muted", listedJS("bob", true, true), 5*time.Second)
	requireMixEnergy(alice, pc, "the mix Alice's demo plays with Bob muted", false)
	bob.do(5*time.Second, chromedp.Click(chromedp.ID("toggleaudio")))
	alice.waitFor("Alice's list to show Bob unmuted", listedJS("bob", true, false), 5*time.Second)
	requireMixEnergy(alice, pc, "Bob's beep in the mix Alice's demo plays after he unmuted", true)

	// The list is of the others: Janus tells a participant about its own PeerConnection coming up and
	// its own configure only in the replies, and the demo adds everyone its events name to the list.
	for i, u := range users {
		requireListOnly(u.b, users[1-i].name)
	}

	// Stop destroys the session (and the demo reloads the page).
	for _, u := range []*browser{bob, alice} {
		u.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	}
	srv.waitNoSessions(t, 10*time.Second)
	alice.requireCleanConsole("during the call")
	bob.requireCleanConsole("during the call")
}

// requireListOnly fails the test unless the demo's participant list has exactly one entry, for
// display.
func requireListOnly(b *browser, display string) {
	b.t.Helper()
	entries, err := eval[[]string](b, `$('#list li').map((i, el) => el.textContent.trim()).get()`)
	if err != nil || len(entries) != 1 || entries[0] != display {
		b.t.Fatalf("the demo's participant list is %q (err %v), want only %q", entries, err, display)
	}
}

// listedJS is true once the demo's participant list has an entry for display with the
// PeerConnection set up (its broken-chain icon hidden) or not, and the muted icon shown or not.
func listedJS(display string, setup, muted bool) string {
	return fmt.Sprintf(`(li => li.length === 1 && li.find('i.absetup').is(':visible') === %v
		&& li.find('i.abmuted').is(':visible') === %v)($('#list li').filter((i, el) => el.textContent.trim() === %q))`,
		!setup, muted, display)
}
