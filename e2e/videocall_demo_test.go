package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestVideoCallDemo runs strata's video call demo (web/videocall.html with lib/strata.js) in two
// browsers, as two people would: each registers a name, Alice calls Bob, Bob's page shows the
// incoming call and he answers. Checked: each decodes the other's camera, a message typed on one
// side arrives on the other over the relayed data channel, and Alice's Hang up returns both pages
// to "registered" (Bob's with the reason strata gives).
func TestVideoCallDemo(t *testing.T) {
	srv := startStrata(t)
	page := "http://" + srv.HTTPAddr() + "/videocall.html?transport=ws"
	alice, bob := newBrowser(t), newBrowser(t)
	for _, u := range []struct {
		b    *browser
		name string
	}{{alice, "alice"}, {bob, "bob"}} {
		u.b.do(10*time.Second, chromedp.Navigate(page))
		u.b.waitFor("the demo module to load", `window.strataDemo && window.strataDemo.state === 'idle'`, 10*time.Second)
		fill(u.b, "username", u.name)
		u.b.do(5*time.Second, chromedp.Click(chromedp.ID("register")))
		u.b.waitFor(u.name+" registered", `window.strataDemo.state === 'registered'`, 10*time.Second)
	}
	fill(alice, "peer", "bob")
	alice.do(5*time.Second, chromedp.Click(chromedp.ID("call")))
	bob.waitFor("Bob's page to show Alice's call", `window.strataDemo.state === 'incoming'
		&& document.getElementById('caller').textContent === 'alice'`, 10*time.Second)
	bob.do(5*time.Second, chromedp.Click(chromedp.ID("answer")))
	for _, b := range []*browser{alice, bob} {
		b.waitFor("the call to be up", `window.strataDemo.state === 'incall'`, 15*time.Second)
	}
	requireDecodedVideo(alice, "window.strataDemo.pc", "Bob's video at Alice", 20*time.Second)
	requireDecodedVideo(bob, "window.strataDemo.pc", "Alice's video at Bob", 20*time.Second)

	fill(bob, "message", "hi alice")
	bob.do(5*time.Second, chromedp.Click(chromedp.ID("send")))
	alice.waitFor("Bob's message at Alice", `window.strataDemo.received.includes('hi alice')`, 10*time.Second)
	alice.screenshot("videocall-alice")
	bob.screenshot("videocall-bob")
	alice.requireCleanConsole("during the call")
	bob.requireCleanConsole("during the call")

	alice.do(5*time.Second, chromedp.Click(chromedp.ID("call"))) // the button reads Hang up now
	bob.waitFor("Bob's page to hear the hangup", `window.strataDemo.state === 'registered'
		&& window.strataDemo.events.some((e) => e.name === 'hangup' && e.detail === 'alice: We did the hangup')`, 10*time.Second)
	alice.waitFor("Alice's page back to registered", `window.strataDemo.state === 'registered'`, 10*time.Second)
	alice.requireCleanConsole("after the hangup")
	bob.requireCleanConsole("after the hangup")
}

// fill sets the value of the input with the id.
func fill(b *browser, id, value string) {
	b.t.Helper()
	if _, err := eval[bool](b, fmt.Sprintf(`document.getElementById(%q).value = %q; true`, id, value)); err != nil {
		b.t.Fatalf("filling in %s: %v", id, err)
	}
}
