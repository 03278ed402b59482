package e2e

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// abDemoRoom is the sample room both servers have by default, the one Janus's demo joins.
const abDemoRoom = 1234

// TestJanusJSAudioBridge runs janus.plugin.audiobridge with the unmodified janus.js from Debian's
// libjs-janus-gateway (testdata/janusjs-audiobridge.html), negotiating as Janus's own audiobridge
// demo does, in two browsers in the sample room 1234: Alice over HTTP long-poll, Bob over the
// WebSocket. Chromium's fake microphone beeps. Checked: each joined reply carries the joiner's id
// and lists the others; the others hear of the newcomer through joined and participants events
// (without an id, which the demo relies on to tell them from its own) until its PeerConnection is
// set up; listparticipants lists both; no participant is told about itself in a participants
// event; each browser decodes the mix with energy from the other's beep; when Bob mutes (configure)
// the mix Alice gets falls silent, and when he unmutes it comes back; when Bob leaves, Alice gets
// `leaving` with his id; janus.js ends both sessions.
func TestJanusJSAudioBridge(t *testing.T) {
	srv := startAudioBridge(t)
	pages := servePage(t)
	alice, bob := newBrowser(t), newBrowser(t)
	openAudioBridgePage(alice, pages.URL, srv.HTTPAPI)
	openAudioBridgePage(bob, pages.URL, srv.WSAPI)

	aliceID := joinAudioBridge(alice, abDemoRoom, "alice")
	bobID := joinAudioBridge(bob, abDemoRoom, "bob")

	bob.waitFor("Bob's joined reply to list Alice, set up",
		fmt.Sprintf(`ab.messages.some((m) => m.audiobridge === 'joined' && m.id === ab.id
			&& m.participants.some((p) => String(p.id) === %q && p.display === 'alice' && p.setup === true))`, aliceID), 5*time.Second)
	alice.waitFor("Alice's page to see Bob join and set up his PeerConnection",
		fmt.Sprintf(`(p => p && p.display === 'bob' && p.setup === true)(ab.participants[%q])`, bobID), 10*time.Second)
	// The others' joined event has no id: Janus's demo takes a joined with an id for its own.
	if n, err := eval[int](alice, `ab.messages.filter((m) => m.audiobridge === 'joined' && 'id' in m).length`); err != nil || n != 1 {
		t.Fatalf("Alice got %d joined messages with an id (err %v), want 1 (her own)", n, err)
	}

	requireListed(t, srv, map[string]string{aliceID: "alice", bobID: "bob"})

	requireMixEnergy(alice, "ab.pc", "Bob's beep in the mix Alice gets", true)
	requireMixEnergy(bob, "ab.pc", "Alice's beep in the mix Bob gets", true)
	alice.screenshot("janusjs-audiobridge-alice")

	// Mute removes Bob from Alice's mix; Bob still hears Alice.
	if _, err := eval[any](bob, `ab.send({ request: 'configure', muted: true })`); err != nil {
		t.Fatalf("Bob's configure muted: %v", err)
	}
	alice.waitFor("Alice's page to see Bob muted", fmt.Sprintf(`ab.participants[%q].muted === true`, bobID), 5*time.Second)
	requireMixEnergy(alice, "ab.pc", "the mix Alice gets with Bob muted", false)
	requireMixEnergy(bob, "ab.pc", "Alice's beep in the mix muted Bob gets", true)
	if _, err := eval[any](bob, `ab.send({ request: 'configure', muted: false })`); err != nil {
		t.Fatalf("Bob's configure unmuted: %v", err)
	}
	requireMixEnergy(alice, "ab.pc", "Bob's beep in the mix Alice gets after he unmuted", true)
	alice.requireCleanConsole("during the call")
	bob.requireCleanConsole("during the call")

	// Janus tells a participant about its own state only in replies (joined, result), and about its
	// PeerConnection and its own configure not at all: the participants events are about the others.
	for name, b := range map[string]*browser{"Alice": alice, "Bob": bob} {
		self, err := eval[[]any](b, `ab.messages.filter((m) => (m.participants || []).some((p) => p.id === ab.id)
			&& !(m.audiobridge === 'joined' && m.id === ab.id))`)
		if err != nil || len(self) != 0 {
			t.Errorf("%s got events that list itself (err %v): %v", name, err, self)
		}
	}

	left, err := eval[map[string]any](bob, `ab.send({ request: 'leave' })`)
	if err != nil || left["audiobridge"] != "left" {
		t.Fatalf("Bob's leave: reply %v, %v", left, err)
	}
	alice.waitFor("Alice to get `leaving` with Bob's id",
		fmt.Sprintf(`ab.left.map(String).includes(%q) && !(%q in ab.participants)`, bobID, bobID), 5*time.Second)
	for _, b := range []*browser{bob, alice} {
		if _, err := eval[chromedp.Void](b, `ab.destroy()`); err != nil {
			t.Fatalf("janus.destroy: %v", err)
		}
	}
	srv.waitNoSessions(t, 5*time.Second)
	time.Sleep(500 * time.Millisecond)
	alice.requireCleanConsole("while janus.js destroyed its session")
	bob.requireCleanConsole("while janus.js destroyed its session")
}

// openAudioBridgePage loads the janus.js audiobridge page for the API at api and waits for
// Janus.init.
func openAudioBridgePage(b *browser, pages, api string) {
	b.t.Helper()
	b.do(10*time.Second, chromedp.Navigate(pages+"/audiobridge.html?server="+url.QueryEscape(api)))
	b.waitFor("Janus.init", `window.ab && ab.state === 'ready' && Janus.initDone`, 10*time.Second)
}

// joinAudioBridge joins room as display and returns the participant id (as a string: ids are
// 64-bit) once janus.js reports the PeerConnection up.
func joinAudioBridge(b *browser, room int, display string) string {
	b.t.Helper()
	start := time.Now()
	id, err := eval[string](b, fmt.Sprintf(`ab.join(%d, %q).then(String)`, room, display))
	if err != nil || id == "" || id == "null" {
		msg, _ := eval[string](b, `ab.error || ''`)
		b.t.Fatalf("%s could not join room %d: id %q, %v %s", display, room, id, err, msg)
	}
	b.t.Logf("%s joined room %d as %s, webrtcState(true) %v later", display, room, id, time.Since(start).Round(time.Millisecond))
	return id
}

// requireListed fails the test unless listparticipants (through the admin API) shows exactly the
// participants in want (id → display) in the sample room, each with its PeerConnection set up.
func requireListed(t *testing.T, srv *abServer, want map[string]string) {
	t.Helper()
	list := srv.participants(t, abDemoRoom)
	got := map[string]string{}
	for _, p := range list {
		if p["setup"] != true {
			t.Errorf("listparticipants: %v is not set up", p)
		}
		got[fmt.Sprint(p["id"])], _ = p["display"].(string)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("listparticipants: %v, want %v", list, want)
	}
}
