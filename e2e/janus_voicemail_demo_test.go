package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/record/rectest"
)

// TestJanusVoicemailDemo leaves a message with Janus's own voicemail demo (voicemailtest.html and
// voicemailtest.js from Debian's janus-demos, unmodified; settings.js as serveJanusDemos fixes it)
// in headless Chromium, whose fake microphone beeps: Start, Record; the demo shows "Started", and
// "Done!" about 10 s later with a link to the message. strata's plugins.voicemail.base is an
// absolute URL (the demo pages come from another origin), so the page's own player loads the
// message from strata and plays it; fetched over HTTP, the message is an Ogg/Opus file of 10 s
// (± 0.5 s) that ffmpeg decodes cleanly.
func TestJanusVoicemailDemo(t *testing.T) {
	port := freePort(t)
	dir := t.TempDir()
	base := fmt.Sprintf("http://127.0.0.1:%d/voicemail/", port)
	srv := startStrata(t, func(c *config.Config) {
		c.Transports.HTTP.Listen = fmt.Sprintf("127.0.0.1:%d", port)
		c.Plugins.VoiceMail.Path = dir
		c.Plugins.VoiceMail.Base = base
	})
	b := newBrowser(t)
	pages := serveJanusDemos(t, "http://"+srv.HTTPAddr()+"/janus", nil)
	b.do(10*time.Second, chromedp.Navigate(pages.URL+"/voicemailtest.html"))
	b.waitFor("Janus.init", `window.Janus && Janus.initDone`, 10*time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	b.waitFor("the plugin to attach (Record enabled)", `$('#voicemail').is(':visible') && !$('#record').prop('disabled')`, 10*time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("record")))
	b.waitFor("the demo to show Started", `$('#record').text() === 'Started'`, 10*time.Second)
	took := b.waitFor("the demo to show Done! with the link", `$('#record').text() === 'Done!' && $('#done').is(':visible')`, 15*time.Second)
	t.Logf("done %v after started", took.Round(time.Millisecond))
	link, err := eval[string](b, `$('#download').attr('href')`)
	if err != nil || !strings.HasPrefix(link, base+"janus-voicemail-") || !strings.HasSuffix(link, ".opus") {
		t.Fatalf("the demo's download link is %q (%v)", link, err)
	}
	b.do(5*time.Second, chromedp.Click(chromedp.ID("listen")))
	b.waitFor("the demo's player to play the message", `(a => a && !a.error && a.readyState >= 2 && a.currentTime > 0.5
		&& a.duration > 9.5 && a.duration < 10.5)($('#rec').get(0))`, 10*time.Second)
	b.requireCleanConsole("leaving a message")

	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", link, resp.Status, err)
	}
	file := filepath.Join(t.TempDir(), "message.opus")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	p := rectest.ProbeFile(t, file)
	t.Logf("message: %v, %.3f s, %d bytes", p.Codecs, p.Duration, len(body))
	if len(p.Codecs) != 1 || p.Codecs[0] != "opus" || p.Duration < 9.5 || p.Duration > 10.5 {
		t.Fatalf("message %+v, want 10 s ± 0.5 s of Opus", p)
	}
	rectest.Decodes(t, file)
}
