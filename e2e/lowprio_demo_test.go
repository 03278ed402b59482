package e2e

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-rtc/strata/internal/config"
)

// demoTransfer is window.strataDemo.transfer of web/lowprio.html.
type demoTransfer struct {
	Name, Verb, State, Error string
	Result                   struct {
		Bytes    int64 `json:"bytes"`
		Verified int64 `json:"verified"`
	}
}

// TestLowprioDemo runs strata's low-priority transfer page (web/lowprio.html, lib/lowprio.js)
// against a strata server: an echotest call, then on its PeerConnection a download of a generated
// stream that the page checks byte by byte, then an upload of one (the server checks it), each
// while the echoed video keeps being decoded, with the transfer's rate and the call's stats in
// the page's samples; and a random upload through lib/lowprio.js that must land intact in
// lowprio.upload_dir.
func TestLowprioDemo(t *testing.T) {
	uploads := t.TempDir()
	srv := startStrata(t, func(cfg *config.Config) {
		cfg.LowPrio.UploadDir = uploads
	})
	b := newBrowser(t)
	b.do(10*time.Second, chromedp.Navigate("http://"+srv.HTTPAddr()+"/lowprio.html"))
	b.waitFor("the demo module to load", `window.strataDemo && window.strataDemo.state === 'idle'`, 10*time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	b.waitFor("the webrtcup event", `window.strataDemo.state === 'up'`, 20*time.Second)
	requireEchoedVideo(b, "window.strataDemo.pc", 20*time.Second)

	for _, c := range []struct{ direction, what string }{{"get", "gen:10000000"}, {"put", "gen:10000000"}} {
		mustEval[bool](b, `(() => {
			document.getElementById('direction').value = '`+c.direction+`';
			document.getElementById('what').value = '`+c.what+`';
			document.getElementById('variant').value = 'ledbat++';
			return true;
		})()`)
		b.do(5*time.Second, chromedp.Click(chromedp.ID("transfer")))
		b.waitFor(c.direction+" "+c.what, `(t => t && t.state !== 'running')(window.strataDemo.transfer)`, 60*time.Second)
		tr := mustEval[demoTransfer](b, `window.strataDemo.transfer`)
		t.Logf("%s %s: %s, %d bytes (%d checked) %s", tr.Verb, tr.Name, tr.State, tr.Result.Bytes, tr.Result.Verified, tr.Error)
		if tr.State != "done" || tr.Result.Bytes != 10_000_000 {
			t.Fatalf("%s %s: %s after %d bytes: %s", c.direction, c.what, tr.State, tr.Result.Bytes, tr.Error)
		}
		if c.direction == "get" && tr.Result.Verified != 10_000_000 {
			t.Errorf("download: %d bytes checked, want all", tr.Result.Verified)
		}
	}
	// A random upload lands in lowprio.upload_dir with the bytes the page sent.
	sum := mustEval[string](b, `(async () => {
		const data = crypto.getRandomValues(new Uint8Array(60000));
		const blob = new Blob([data, data, data, data, data]);
		const t = await window.lowprioModule.put(strataDemo.pc, 'random.bin', blob, { variant: 'ledbat' });
		await t.finished;
		const hash = await crypto.subtle.digest('SHA-256', await blob.arrayBuffer());
		return [...new Uint8Array(hash)].map((x) => x.toString(16).padStart(2, '0')).join('');
	})()`)
	// The sender's transfer ends when its last bytes are acknowledged; the server renames the
	// finished upload into place just after.
	var stored []byte
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if stored, err = os.ReadFile(filepath.Join(uploads, "random.bin")); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("the upload is not in lowprio.upload_dir: %v", err)
	}
	if got := fmt.Sprintf("%x", sha256.Sum256(stored)); got != sum || len(stored) != 300000 {
		t.Errorf("stored upload: %d bytes, SHA-256 %s; the page sent 300000 bytes, %s", len(stored), got, sum)
	}

	// The chart's samples saw the transfers and the call together.
	ok := mustEval[bool](b, `window.strataDemo.samples.some((s) => s.transferKbps > 0 && s.videoInKbps > 0 && s.rttMs != null)`)
	if !ok {
		t.Errorf("no sample with both the transfer's rate and the echoed video: %v", mustEval[any](b, `window.strataDemo.samples`))
	}
	b.screenshot("lowprio-demo")
	requireEchoedVideo(b, "window.strataDemo.pc", 10*time.Second) // the call survived both transfers
	b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	b.waitFor("the demo to stop", `window.strataDemo.state === 'idle'`, 10*time.Second)
	waitNoSessions(t, srv, 5*time.Second)
	b.requireCleanConsole("during the demo")
}
