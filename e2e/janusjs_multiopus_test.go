package e2e

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// audioStats is one direction of the audio m-line as getStats reports it, with its codec.
type audioStats struct {
	Packets   float64 `json:"packets"`
	Bytes     float64 `json:"bytes"`
	Samples   float64 `json:"samples"`   // inbound: totalSamplesReceived
	Concealed float64 `json:"concealed"` // inbound: concealedSamples
	Codec     string  `json:"codec"`
	Channels  int     `json:"channels"`
}

// audioStatsJS reads the %s-rtp audio entry ("inbound" or "outbound") of the PeerConnection %s.
const audioStatsJS = `(async () => {
  const pc = %s;
  if (!pc) return null;
  const report = await pc.getStats();
  let a = null;
  report.forEach((s) => { if (s.type === '%s-rtp' && s.kind === 'audio') a = s; });
  if (!a) return null;
  const codec = a.codecId && report.get(a.codecId);
  return { packets: a.packetsReceived || a.packetsSent || 0, bytes: a.bytesReceived || a.bytesSent || 0,
           samples: a.totalSamplesReceived || 0, concealed: a.concealedSamples || 0,
           codec: codec ? codec.mimeType : '', channels: codec ? codec.channels || 0 : 0 };
})()`

func readAudio(b *browser, pcExpr, direction string) (*audioStats, error) {
	return eval[*audioStats](b, fmt.Sprintf(audioStatsJS, pcExpr, direction))
}

// TestJanusJSMultiopus runs the negotiation of Janus's multiopus demo (multiopus.js) with the
// unmodified janus.js against strata's echotest, over the WebSocket: the offer is Chrome's with
// Opus munged into multiopus/48000/6 and the 5.1 channel mapping, and audiocodec "multiopus" is
// asked for. The answer must take the audio as multiopus, Chromium must send multiopus, and the
// echoed audio must arrive as multiopus, keep growing, and decode (Chromium's concealment stays a
// small part of the samples); the echoed video is decoded too.
func TestJanusJSMultiopus(t *testing.T) {
	srv := startStrata(t)
	pages := servePage(t)
	b := newBrowser(t)
	b.do(10*time.Second, chromedp.Navigate(pages.URL+"/?multiopus=1&server="+url.QueryEscape("ws://"+srv.WSAddr())))
	b.waitFor("Janus.init", `window.janusTest && window.janusTest.state === 'ready' && Janus.initDone`, 10*time.Second)
	b.do(5*time.Second, chromedp.Click(chromedp.ID("start")))
	b.waitFor("webrtcState(true)", `window.janusTest.webrtcUp || window.janusTest.state === 'error'`, 20*time.Second)
	if msg, _ := eval[string](b, `window.janusTest.error || ''`); msg != "" {
		t.Fatalf("janus.js reported an error: %s", msg)
	}

	offer, _ := eval[string](b, `window.janusTest.offer || ''`)
	if !strings.Contains(offer, "multiopus/48000/6") {
		t.Fatalf("the page did not offer multiopus:\n%s", offer)
	}
	answer, _ := eval[string](b, `window.janusTest.answer || ''`)
	audio := mSection(answer, "audio")
	for _, want := range []string{"multiopus/48000/6", "channel_mapping=0,4,1,2,3,5", "num_streams=4", "coupled_streams=2", "a=sendrecv"} {
		if !strings.Contains(audio, want) {
			t.Fatalf("strata's answer does not take the audio as multiopus (no %q):\n%s", want, audio)
		}
	}
	if strings.HasPrefix(audio, "m=audio 0 ") {
		t.Fatalf("strata's answer refuses the audio:\n%s", audio)
	}

	const pc = "window.janusTest.handle && window.janusTest.handle.webrtcStuff.pc"
	out := waitAudio(b, pc, "outbound", "the browser sending audio", 10*time.Second)
	if !strings.EqualFold(out.Codec, "audio/multiopus") || out.Channels != 6 {
		t.Fatalf("Chromium sends %s with %d channels, want audio/multiopus with 6", out.Codec, out.Channels)
	}
	first := waitAudio(b, pc, "inbound", "echoed audio", 15*time.Second)
	time.Sleep(1500 * time.Millisecond)
	second, err := readAudio(b, pc, "inbound")
	if err != nil || second == nil {
		t.Fatalf("reading inbound audio again: %v", err)
	}
	t.Logf("echoed audio: %s, %d channels; %.0f packets, %.0f bytes, then %.0f packets, %.0f bytes 1.5 s later; %.0f samples, %.0f concealed",
		second.Codec, second.Channels, first.Packets, first.Bytes, second.Packets, second.Bytes, second.Samples, second.Concealed)
	if !strings.EqualFold(second.Codec, "audio/multiopus") || second.Channels != 6 {
		t.Fatalf("the echoed audio arrives as %s with %d channels, want audio/multiopus with 6", second.Codec, second.Channels)
	}
	// 20 ms packets: 75 in 1.5 s; allow for a slow machine.
	if second.Packets < first.Packets+40 || second.Bytes <= first.Bytes {
		t.Fatalf("echoed audio stalled: %.0f then %.0f packets, %.0f then %.0f bytes", first.Packets, second.Packets, first.Bytes, second.Bytes)
	}
	if second.Samples == 0 || second.Concealed > second.Samples/2 {
		t.Fatalf("the echoed multiopus does not decode: %.0f of %.0f samples concealed", second.Concealed, second.Samples)
	}
	requireEchoedVideo(b, pc, 20*time.Second)
	b.screenshot("janusjs-multiopus")
	b.requireCleanConsole("during the multiopus call")

	_, err = eval[chromedp.Void](b, `new Promise((resolve, reject) =>
		window.janusTest.janus.destroy({ success: resolve, error: reject }))`)
	if err != nil {
		t.Fatalf("janus.destroy: %v", err)
	}
	waitNoSessions(t, srv, 5*time.Second)
}

// waitAudio waits for audio packets in one direction of pcExpr's audio m-line.
func waitAudio(b *browser, pcExpr, direction, what string, timeout time.Duration) audioStats {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		a, err := readAudio(b, pcExpr, direction)
		if err == nil && a != nil && a.Packets > 10 {
			return *a
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("no %s within %v: last %s-rtp audio %+v (err %v)", what, timeout, direction, a, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// mSection returns the m-section of an SDP for a kind ("audio"), "" if there is none.
func mSection(sdp, kind string) string {
	start := strings.Index(sdp, "m="+kind+" ")
	if start < 0 {
		return ""
	}
	rest := sdp[start:]
	if end := strings.Index(rest[2:], "\nm="); end >= 0 {
		rest = rest[:end+2]
	}
	return rest
}
