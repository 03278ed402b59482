package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestJanusVideoCallDemo runs Janus's own video call demo (videocalltest.html and videocalltest.js
// from Debian's janus-demos, unmodified; settings.js as serveJanusDemos fixes it) in two browsers,
// one over HTTP long-poll, one over the WebSocket, as two users would: Start, a username, Register;
// Alice types Bob's name and Calls, Bob's demo shows its "Incoming call" dialog and he Answers.
// Checked: each demo decodes the other's video, text typed into the demo's DataChannel field
// arrives in the other's, and Alice's Hangup ends the call on both pages; Stop ends the sessions.
func TestJanusVideoCallDemo(t *testing.T) {
	srv := startStrata(t)
	alice, bob := newBrowser(t), newBrowser(t)
	users := []struct {
		b    *browser
		name string
		api  string
	}{{alice, "alice", "http://" + srv.HTTPAddr() + "/janus"}, {bob, "bob", "ws://" + srv.WSAddr()}}
	for _, u := range users {
		pages := serveJanusDemos(t, u.api, nil)
		u.b.do(10*time.Second, chromedp.Navigate(pages.URL+"/videocalltest.html"))
		u.b.waitFor("Janus.init", `window.Janus && Janus.initDone`, 10*time.Second)
		u.b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
		u.b.waitFor("the plugin to attach (the name form)", `$('#login').is(':visible')`, 10*time.Second)
		u.b.do(5*time.Second, chromedp.SendKeys(chromedp.ID("username"), u.name), chromedp.Click(chromedp.ID("register")))
		u.b.waitFor(u.name+" registered", fmt.Sprintf(`$('#youok').text() === "Registered as '%s'"`, u.name), 10*time.Second)
	}

	alice.do(5*time.Second, chromedp.SendKeys(chromedp.ID("peer"), "bob"), chromedp.Click(chromedp.ID("call")))
	bob.waitFor("Bob's incoming call dialog", `$('.bootbox-body:contains("Incoming call from alice!")').is(':visible')`, 15*time.Second)
	bob.do(5*time.Second, chromedp.Evaluate[chromedp.Void](`$('.bootbox .btn-success').click()`))
	const pc = "videocall.webrtcStuff.pc"
	requireDecodedVideo(alice, pc, "Bob's video in Alice's demo", 20*time.Second)
	requireDecodedVideo(bob, pc, "Alice's video in Bob's demo", 20*time.Second)
	for i, u := range users {
		other := users[1-i]
		u.b.waitFor(u.name+"'s data field to open", `!$('#datasend').attr('disabled')`, 10*time.Second)
		text := "hello " + other.name
		u.b.do(5*time.Second, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`$('#datasend').val(%q); sendData()`, text)))
		other.b.waitFor(other.name+"'s demo to show "+u.name+"'s message", fmt.Sprintf(`$('#datarecv').val() === %q`, text), 10*time.Second)
	}
	alice.screenshot("janus-videocall-demo-alice")
	bob.screenshot("janus-videocall-demo-bob")
	alice.requireCleanConsole("during the call")
	bob.requireCleanConsole("during the call")

	alice.do(5*time.Second, chromedp.Click(chromedp.ID("call"))) // the button reads Hangup now
	for _, u := range users {
		u.b.waitFor(u.name+"'s demo back to Call", `$('#call').text() === 'Call' && $('#videoright').children().length === 0`, 10*time.Second)
	}
	for _, u := range []*browser{bob, alice} {
		u.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	}
	waitNoSessions(t, srv, 10*time.Second)
}
