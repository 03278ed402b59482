package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestJanusTextRoomDemo runs Janus's own text room demo (textroomtest.html and textroomtest.js
// from Debian's janus-demos, unmodified; settings.js as serveJanusDemos fixes it) against strata
// in two browsers: Start (setup, the offer answered with a data channel, ack), a display name,
// "Join the room" (1234); each page lists the other; Alice's message typed with Enter shows in
// Bob's chat; Alice clicks Bob in the list and whispers to him through the demo's prompt; Alice
// presses Stop and Bob's page shows that she left.
func TestJanusTextRoomDemo(t *testing.T) {
	srv := startStrata(t)
	pages := serveJanusDemos(t, "http://"+srv.HTTPAddr()+"/janus", nil)
	alice, bob := newBrowser(t), newBrowser(t)
	// On Stop the server closes the PeerConnection, aborting the SCTP association, before janus.js
	// closes its own, and janus.js logs the abort as an error. Janus does the same: it closes its
	// SCTP socket with SO_LINGER 0, which is an ABORT (sctp.c).
	alice.tolerate("User-Initiated Abort")
	for b, name := range map[*browser]string{alice: "Alice", bob: "Bob"} {
		b.do(10*time.Second, chromedp.Navigate(pages.URL+"/textroomtest.html"))
		b.waitFor("Janus.init", `window.Janus && Janus.initDone`, 10*time.Second)
		b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
		b.waitFor("the data channel (the name form)", `$('#registernow').is(':visible')`, 15*time.Second)
		b.do(5*time.Second, chromedp.SendKeys(chromedp.ID("username"), name), chromedp.Click(chromedp.ID("register")))
		b.waitFor(name+" in the room", fmt.Sprintf(`$('#room').is(':visible') && $('#participant').text() === %q
			&& !$('#datasend').prop('disabled')`, name), 10*time.Second)
	}
	alice.waitFor("Alice's list to show Bob", `$('#list li').text() === 'Bob'`, 10*time.Second)
	bob.waitFor("Bob's list to show Alice", `$('#list li').text() === 'Alice'`, 10*time.Second)

	alice.do(5*time.Second, chromedp.SendKeys(chromedp.ID("datasend"), "hello from janus.js\r"))
	bob.waitFor("Alice's message in Bob's chat", `$('#chatroom p').toArray().some((p) => p.textContent.endsWith('Alice: hello from janus.js'))`, 10*time.Second)
	alice.waitFor("the demo to clear the field once strata acknowledged", `$('#datasend').val() === ''`, 5*time.Second)

	alice.do(5*time.Second, chromedp.Click(chromedp.CSS("#list li")))
	alice.waitFor("the demo's private message prompt", `$('.bootbox-input').is(':visible')`, 5*time.Second)
	alice.do(5*time.Second, chromedp.SendKeys(chromedp.CSS(".bootbox-input"), "only for bob"), chromedp.Click(chromedp.CSS(".bootbox-accept")))
	bob.waitFor("the whisper in Bob's chat", `$('#chatroom p').toArray().some((p) => p.textContent.endsWith('[whisper from Alice] only for bob'))`, 10*time.Second)
	alice.waitFor("Alice's chat to confirm it", `$('#chatroom p').toArray().some((p) => p.textContent.endsWith('[whisper to Bob] only for bob'))`, 5*time.Second)

	alice.waitFor("the prompt to fade out", `$('.modal, .modal-backdrop').length === 0`, 5*time.Second)
	alice.do(5*time.Second, chromedp.Click(chromedp.ID("start"))) // Stop: the demo destroys the session
	bob.waitFor("Bob's page to show Alice left", `$('#chatroom p').toArray().some((p) => p.textContent.endsWith('Alice left'))
		&& $('#list li').length === 0`, 10*time.Second)
	alice.requireCleanConsole("in Janus's text room demo")
	bob.requireCleanConsole("in Janus's text room demo")
}
