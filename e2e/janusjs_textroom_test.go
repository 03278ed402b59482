package e2e

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestJanusJSTextRoom: two browsers with the unmodified janus.js, one over HTTP long-poll and one
// over the WebSocket, set up janus.plugin.textroom as Janus's demo does (setup, the offer answered
// with a data track, ack), join the sample room 1234 and exchange a public and a private message.
func TestJanusJSTextRoom(t *testing.T) {
	srv := startStrata(t)
	pages := servePage(t)
	alice, bob := newBrowser(t), newBrowser(t)
	for b, api := range map[*browser]string{alice: "http://" + srv.HTTPAddr() + "/janus", bob: "ws://" + srv.WSAddr()} {
		b.do(10*time.Second, chromedp.Navigate(pages.URL+"/textroom.html?server="+url.QueryEscape(api)))
		b.waitFor("Janus.init", `window.tr && tr.state === 'ready' && Janus.initDone`, 10*time.Second)
		if ok, err := eval[bool](b, `tr.open('x')`); err != nil || !ok {
			msg, _ := eval[string](b, `tr.error || ''`)
			t.Fatalf("setup: %v %v %s", ok, err, msg)
		}
	}
	for b, name := range map[*browser]string{alice: "alice", bob: "bob"} {
		r, err := eval[map[string]any](b, fmt.Sprintf(`tr.request({textroom: 'join', room: 1234, username: %q})`, name))
		if err != nil || r["textroom"] != "success" {
			t.Fatalf("%s join: %v %v", name, r, err)
		}
	}
	r, err := eval[map[string]any](alice, `tr.request({textroom: 'message', room: 1234, text: 'hello bob'})`)
	if err != nil || r["textroom"] != "success" {
		t.Fatalf("message: %v %v", r, err)
	}
	bob.waitFor("Bob to get Alice's message",
		`tr.messages.some((m) => m.textroom === 'message' && m.from === 'alice' && m.text === 'hello bob' && !m.whisper)`, 5*time.Second)
	r, err = eval[map[string]any](bob, `tr.request({textroom: 'message', room: 1234, text: 'just you', to: 'alice'})`)
	if err != nil || r["sent"].(map[string]any)["alice"] != true {
		t.Fatalf("private message: %v %v", r, err)
	}
	alice.waitFor("Alice to get Bob's whisper",
		`tr.messages.some((m) => m.textroom === 'message' && m.from === 'bob' && m.whisper === true)`, 5*time.Second)
	alice.requireCleanConsole("in the text room")
	bob.requireCleanConsole("in the text room")
}
