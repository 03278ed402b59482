package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-rtc/strata/internal/config"
)

const textRoomSecret = "e2e-textroom"

// TestTextRoomDemo runs strata's text room demo (web/textroom.html with lib/textroom.js) in two
// browsers, Alice over HTTP long-poll and Bob over the WebSocket: each joins the sample room 1234
// and sees the other in the participant list; Alice's public message appears in Bob's log; Bob
// picks Alice in "To" and his whisper appears in Alice's log only as a private one; an
// announcement sent through the admin API reaches both pages; Bob leaves and Alice's page shows
// it; both sessions end.
func TestTextRoomDemo(t *testing.T) {
	srv := startStrata(t, func(c *config.Config) { c.Plugins.TextRoom.Rooms[0].Secret = textRoomSecret })
	page := fmt.Sprintf("http://%s/textroom.html?room=1234", srv.HTTPAddr())
	alice, bob := newBrowser(t), newBrowser(t)
	joinTextRoom(alice, page+"&name=alice")
	joinTextRoom(bob, page+"&name=bob&transport=ws")
	alice.waitFor("Alice's page to list Bob", `window.strataDemo.participants.has('bob')
		&& [...document.querySelectorAll('#people li')].some((li) => li.textContent === 'bob')`, 10*time.Second)
	if ok, err := eval[bool](bob, `window.strataDemo.participants.has('alice') && window.strataDemo.handle.session.transport === 'ws'`); err != nil || !ok {
		t.Fatalf("Bob's page: alice listed and over the WebSocket: %v %v", ok, err)
	}

	typeMessage(alice, "", "hello bob")
	bob.waitFor("Alice's message in Bob's log", `window.strataDemo.messages.some((m) => m.from === 'alice' && m.text === 'hello bob' && !m.whisper)
		&& [...document.querySelectorAll('#log li.m-message')].some((li) => li.textContent.endsWith('alicehello bob'))`, 10*time.Second)

	typeMessage(bob, "alice", "just for you")
	alice.waitFor("Bob's whisper in Alice's log", `window.strataDemo.messages.some((m) => m.from === 'bob' && m.text === 'just for you' && m.whisper)
		&& document.querySelector('#log li.whisper .text')?.textContent === 'just for you'`, 10*time.Second)
	bob.waitFor("Bob's own copy of the whisper", `window.strataDemo.messages.some((m) => m.whisper && m.text === '→ alice: just for you')`, 5*time.Second)

	var reply struct {
		Janus    string         `json:"janus"`
		Response map[string]any `json:"response"`
	}
	adminCall(t, srv, fmt.Sprintf(`{"janus":"message_plugin","plugin":"janus.plugin.textroom","request":`+
		`{"request":"announcement","room":1234,"secret":%q,"text":"closing soon"}}`, textRoomSecret), &reply)
	if reply.Janus != "success" || reply.Response["textroom"] != "success" {
		t.Fatalf("announcement: %+v", reply)
	}
	for _, b := range []*browser{alice, bob} {
		b.waitFor("the announcement in the log", `window.strataDemo.messages.some((m) => m.kind === 'announcement' && m.text === 'closing soon')`, 10*time.Second)
	}
	// Bob's page never got his own whisper back, nor Alice hers: each message once.
	counts, _ := eval[string](alice, `JSON.stringify(window.strataDemo.messages.map((m) => m.kind + ':' + m.text))`)
	var got []string
	_ = json.Unmarshal([]byte(counts), &got)
	t.Logf("Alice's log: %q", got)
	if len(got) != 4 { // bob joined, hello bob (hers, echoed by the room), the whisper, the announcement
		t.Errorf("Alice's log has %d lines, want 4: %q", len(got), got)
	}
	alice.screenshot("textroom-alice")

	bob.do(5*time.Second, chromedp.Click(chromedp.ID("start"))) // the button reads Leave now
	bob.waitFor("Bob's page to leave", `window.strataDemo.state === 'idle' && window.strataDemo.session === null`, 10*time.Second)
	alice.waitFor("Alice's page to see Bob leave", `!window.strataDemo.participants.has('bob')
		&& window.strataDemo.messages.some((m) => m.kind === 'notice' && m.text === 'bob left')`, 10*time.Second)
	alice.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	alice.waitFor("Alice's page to leave", `window.strataDemo.state === 'idle' && window.strataDemo.session === null`, 10*time.Second)
	waitNoSessions(t, srv, 5*time.Second)
	alice.requireCleanConsole("in the text room")
	bob.requireCleanConsole("in the text room")
}

// joinTextRoom opens the demo (room and name in the URL), clicks Join and waits until the page is
// in the room.
func joinTextRoom(b *browser, page string) {
	b.t.Helper()
	b.do(10*time.Second, chromedp.Navigate(page))
	b.waitFor("the demo module to load", `window.strataDemo && window.strataDemo.state === 'idle'`, 10*time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	took := b.waitFor("the page to join", `['up', 'error'].includes(window.strataDemo.state)`, 15*time.Second)
	if msg, _ := eval[string](b, `window.strataDemo.error || ''`); msg != "" {
		b.t.Fatalf("the page failed to join: %s", msg)
	}
	b.t.Logf("set up and joined in %v", took.Round(time.Millisecond))
}

// typeMessage picks the recipient in "To" ("" for everyone), types text and presses Send.
func typeMessage(b *browser, to, text string) {
	b.t.Helper()
	ok, err := eval[bool](b, fmt.Sprintf(`(() => { const s = document.getElementById('to'); s.value = %q; return s.value === %q; })()`, to, to))
	if err != nil || !ok {
		b.t.Fatalf("choosing %q in To: %v %v", to, ok, err)
	}
	b.do(5*time.Second, chromedp.SendKeys(chromedp.ID("text"), text), chromedp.Click(chromedp.ID("send")))
}
