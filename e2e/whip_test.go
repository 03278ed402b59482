package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-rtc/strata/internal/config"
)

// whipPage publishes the fake camera with WHIP and watches it back with WHEP, with nothing but
// fetch and RTCPeerConnection, as a WHIP/WHEP web client does. It is served from another origin
// than strata's HTTP listener, with a bearer token, so every request goes through CORS: the
// preflights (Authorization and Content-Type are not simple headers), Location and ETag read from
// the responses (exposed headers), and DELETE.
const whipPage = `<!doctype html>
<html><body><video id="remote" autoplay muted playsinline></video>
<script>
const server = %q, token = %q;
window.whip = {};
async function gathered(pc) {
  if (pc.iceGatheringState === 'complete') return;
  await new Promise(r => pc.addEventListener('icegatheringstatechange', () => pc.iceGatheringState === 'complete' && r()));
}
async function exchange(pc, url) {
  await pc.setLocalDescription(await pc.createOffer());
  await gathered(pc);
  const resp = await fetch(server + url, {method: 'POST', body: pc.localDescription.sdp,
    headers: {'Content-Type': 'application/sdp', 'Authorization': 'Bearer ' + token}});
  if (resp.status !== 201) throw new Error(url + ': ' + resp.status + ' ' + await resp.text());
  const location = resp.headers.get('Location'), etag = resp.headers.get('ETag');
  if (!location || !etag) throw new Error(url + ': Location or ETag not exposed to the page');
  await pc.setRemoteDescription({type: 'answer', sdp: await resp.text()});
  return location;
}
window.publish = async () => {
  const stream = await navigator.mediaDevices.getUserMedia({audio: true, video: {width: 640, height: 480}});
  const pc = new RTCPeerConnection();
  for (const track of stream.getTracks()) pc.addTransceiver(track, {direction: 'sendonly'});
  whip.pub = pc;
  whip.pubLocation = await exchange(pc, '/whip/endpoint/1234');
  return whip.pubLocation;
};
window.watch = async () => {
  const pc = new RTCPeerConnection();
  pc.addTransceiver('audio', {direction: 'recvonly'});
  pc.addTransceiver('video', {direction: 'recvonly'});
  pc.ontrack = e => { if (e.track.kind === 'video') document.getElementById('remote').srcObject = new MediaStream([e.track]); };
  whip.sub = pc;
  whip.subLocation = await exchange(pc, '/whep/endpoint/1234');
  return whip.subLocation;
};
window.stop = async () => {
  const codes = [];
  for (const loc of [whip.subLocation, whip.pubLocation]) {
    const resp = await fetch(server + loc, {method: 'DELETE', headers: {'Authorization': 'Bearer ' + token}});
    codes.push(resp.status);
  }
  whip.pub.close(); whip.sub.close();
  return codes;
};
</script></body></html>`

// TestWHIPAndWHEPFromChromium publishes Chromium's fake camera into room 1234 over WHIP and plays
// it back over WHEP in the same page, cross-origin, and checks the video decodes; DELETE ends
// both, and no session is left behind.
func TestWHIPAndWHEPFromChromium(t *testing.T) {
	const token = "whip-e2e-token"
	srv := startStrata(t, func(c *config.Config) { c.Transports.HTTP.WHIP.Token = token })
	page := fmt.Sprintf(whipPage, "http://"+srv.HTTPAddr(), token)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	defer origin.Close()

	b := newBrowser(t)
	b.do(20*time.Second, chromedp.Navigate(origin.URL))
	loc, err := eval[string](b, "publish()")
	if err != nil {
		t.Fatalf("WHIP publish from the page: %v", err)
	}
	t.Logf("WHIP resource %s", loc)
	b.waitFor("the WHIP PeerConnection to connect", "whip.pub.connectionState === 'connected'", 20*time.Second)

	// The publisher is listed once its PeerConnection is up; WHEP retries until then.
	var watchErr error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if loc, watchErr = eval[string](b, "watch()"); watchErr == nil {
			break
		}
	}
	if watchErr != nil {
		t.Fatalf("WHEP watch from the page: %v", watchErr)
	}
	t.Logf("WHEP resource %s", loc)
	requireDecodedVideo(b, "whip.sub", "video over WHIP and WHEP", 30*time.Second)
	b.screenshot("whip-whep")
	b.requireCleanConsole("WHIP and WHEP")

	codes, err := eval[[]int](b, "stop()")
	if err != nil || len(codes) != 2 || codes[0] != http.StatusOK || codes[1] != http.StatusOK {
		t.Fatalf("DELETE from the page: %v %v, want 200 and 200", codes, err)
	}
	waitNoSessions(t, srv, 10*time.Second)
}
