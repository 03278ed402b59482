package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-rtc/strata/internal/chromium"
	"github.com/strata-rtc/strata/internal/lowprio/dc"
)

// lowprioPage loads lib/lowprio.js and its WebAssembly module into a page of srvAddr's origin and
// gives the page a PeerConnection (window.pc) that the test signals by hand, without trickle.
func lowprioPage(t *testing.T, srvAddr string) *browser {
	t.Helper()
	// Two browsers must reach each other's host candidates, which Chromium would otherwise hide
	// behind mDNS names (a page that never asked for the camera).
	b := newBrowserWith(t, chromium.HostCandidates)
	b.do(10*time.Second, chromedp.Navigate("http://"+srvAddr+"/index.html"))
	mustEval[bool](b, lowprioSetupJS)
	return b
}

// lowprioSetupJS loads lib/lowprio.js and its module into a page and gives it window.pc, the
// helpers the tests signal and read through, and window.transfers (every transfer tracked).
const lowprioSetupJS = `(async () => {
		window.lp = await import('/lib/lowprio.js');
		await lp.load();
		window.pc = new RTCPeerConnection();
		window.transfers = [];
		window.hex = (buf) => [...new Uint8Array(buf)].map((x) => x.toString(16).padStart(2, '0')).join('');
		window.gathered = () => new Promise((resolve) => {
			if (pc.iceGatheringState === 'complete') return resolve(pc.localDescription.toJSON());
			pc.addEventListener('icegatheringstatechange', () => {
				if (pc.iceGatheringState === 'complete') resolve(pc.localDescription.toJSON());
			});
		});
		// Every transfer this page takes part in, with its outcome, for the test to read.
		window.track = (t) => {
			const rec = { verb: t.verb, name: t.name, role: t.role, state: 'running', result: null, error: null, progress: 0 };
			transfers.push(rec);
			t.on('progress', (p) => { rec.progress++; rec.last = p; });
			t.finished.then((r) => { rec.state = 'done'; rec.result = r; }, (e) => { rec.state = 'error'; rec.error = String(e.message ?? e); });
			return t;
		};
		return true;
	})()`

func mustEval[T any](b *browser, js string) T {
	b.t.Helper()
	v, err := eval[T](b, js)
	if err != nil {
		b.t.Fatalf("evaluating %.80s…: %v", js, err)
	}
	return v
}

// page evaluates JavaScript in one tab: an e2e browser, or a Chromium launched in a namespace.
type page interface {
	evalRaw(js string) (json.RawMessage, error)
}

func (b *browser) evalRaw(js string) (json.RawMessage, error) { return eval[json.RawMessage](b, js) }

// pageEval evaluates js in p (awaiting a promise) and decodes the result; an error ends the test.
func pageEval[T any](t *testing.T, p page, js string) T {
	t.Helper()
	var v T
	raw, err := p.evalRaw(js)
	if err == nil {
		err = json.Unmarshal(raw, &v)
	}
	if err != nil {
		t.Fatalf("evaluating %.80s…: %v", js, err)
	}
	return v
}

// connectPages signals a PeerConnection from page a (offerer) to page b (answerer). What a
// created before (its channels) is in the offer.
func connectPages(t *testing.T, a, b page) {
	t.Helper()
	offer := pageEval[json.RawMessage](t, a, `(async () => { await pc.setLocalDescription(await pc.createOffer()); return await gathered(); })()`)
	answer := pageEval[json.RawMessage](t, b, fmt.Sprintf(`(async () => {
		await pc.setRemoteDescription(%s);
		await pc.setLocalDescription(await pc.createAnswer());
		return await gathered();
	})()`, offer))
	pageEval[bool](t, a, fmt.Sprintf(`pc.setRemoteDescription(%s).then(() => true)`, answer))
}

type pageTransfer struct {
	Verb, Name, Role, State, Error string
	Progress                       int
	Result                         struct {
		Bytes    int64   `json:"bytes"`
		Verified int64   `json:"verified"`
		Elapsed  float64 `json:"elapsedMs"`
	}
}

// waitTransfers waits until page b has n transfers and none is running, and returns them.
func waitTransfers(b *browser, n int, timeout time.Duration) []pageTransfer {
	b.t.Helper()
	b.waitFor(fmt.Sprintf("%d finished transfers", n),
		fmt.Sprintf(`transfers.length >= %d && transfers.every((r) => r.state !== 'running')`, n), timeout)
	return mustEval[[]pageTransfer](b, `transfers`)
}

// TestLowprioBrowserToBrowser runs lib/lowprio.js in two Chromiums connected directly (seed 002's
// peer-to-peer case): a generated stream put from a to b and checked byte by byte there, a get
// from b that a answers with a generated stream, and a random 3 MB Blob whose SHA-256 must match
// on both sides. Every transfer must report progress and end cleanly on both ends.
func TestLowprioBrowserToBrowser(t *testing.T) {
	srv := startStrata(t)
	a := lowprioPage(t, srv.HTTPAddr())
	b := lowprioPage(t, srv.HTTPAddr())

	mustEval[bool](b, `(lp.accept(pc, { onTransfer: track }), true)`)
	mustEval[bool](a, `(async () => {
		lp.accept(pc, { onTransfer: track });
		track(await lp.put(pc, 'gen:4000000', null));
		return true;
	})()`)
	connectPages(t, a, b)

	// Once connected, a get opened by b (a serves gen:) and a Blob put by a, at the same time.
	mustEval[bool](b, `(async () => { track(await lp.get(pc, 'gen:2000000', { variant: 'ledbat++' })); return true; })()`)
	mustEval[bool](a, `(async () => {
		const data = new Uint8Array(3 << 20);
		for (let i = 0; i < data.length; i += 65536) crypto.getRandomValues(data.subarray(i, i + 65536));
		window.blobSHA = hex(await crypto.subtle.digest('SHA-256', data));
		track(await lp.put(pc, 'dir/file.bin', new Blob([data])));
		return true;
	})()`)

	fromA := waitTransfers(a, 3, 60*time.Second)
	fromB := waitTransfers(b, 3, 60*time.Second)
	sha := mustEval[string](b, `(async () => {
		const r = transfers.find((r) => r.name === 'dir/file.bin').result;
		return hex(await crypto.subtle.digest('SHA-256', await r.blob.arrayBuffer()));
	})()`)
	want := mustEval[string](a, `blobSHA`)
	if sha != want {
		t.Errorf("dir/file.bin: SHA-256 at the receiver %s, sent %s", sha, want)
	}
	for _, side := range []struct {
		page string
		list []pageTransfer
	}{{"a", fromA}, {"b", fromB}} {
		for _, tr := range side.list {
			t.Logf("%s: %s %s (%s): %s, %d bytes in %.0f ms, %d progress events %s",
				side.page, tr.Verb, tr.Name, tr.Role, tr.State, tr.Result.Bytes, tr.Result.Elapsed, tr.Progress, tr.Error)
			if tr.State != "done" {
				t.Errorf("%s: %s %s: %s %s", side.page, tr.Verb, tr.Name, tr.State, tr.Error)
			}
			if tr.Progress == 0 {
				t.Errorf("%s: %s %s: no progress event", side.page, tr.Verb, tr.Name)
			}
		}
	}
	for _, tr := range fromB {
		if tr.Role == "receive" && tr.Name != "dir/file.bin" && tr.Result.Verified != tr.Result.Bytes {
			t.Errorf("b: %s verified %d of %d bytes", tr.Name, tr.Result.Verified, tr.Result.Bytes)
		}
	}
	a.requireCleanConsole("during the transfers")
	b.requireCleanConsole("during the transfers")
}

// TestLowprioBrowserBadInput: a peer that opens a lowprio channel with the wrong options, or sends
// garbage on a right one, gets a RESET with a clear reason and that channel closed; the receiving
// page's PeerConnection and its other transfers keep working.
func TestLowprioBrowserBadInput(t *testing.T) {
	srv := startStrata(t)
	a := lowprioPage(t, srv.HTTPAddr())
	b := lowprioPage(t, srv.HTTPAddr())
	mustEval[bool](b, `(lp.accept(pc, { onTransfer: track }), true)`)
	// a's raw channels record the RESET they get back (code and reason) and their closing.
	mustEval[bool](a, `(() => {
		window.raw = {};
		window.rawChannel = (label, opts, send) => {
			const ch = pc.createDataChannel(label, opts);
			ch.binaryType = 'arraybuffer';
			const rec = (raw[label] = { reset: null, closed: false });
			ch.onopen = () => send && ch.send(new Uint8Array(send));
			ch.onmessage = (ev) => {
				const m = new Uint8Array(ev.data);
				if (m[0] !== 0x14) return;
				const code = (m[5] << 8) | m[6];
				rec.reset = { code, reason: new TextDecoder().decode(m.subarray(8, 8 + m[7])) };
			};
			ch.onclose = () => (rec.closed = true);
		};
		rawChannel('lowprio:put:ordered', {}, null);
		rawChannel('lowprio:put:gen:1000', lp.CHANNEL_OPTIONS, [0xff, 1, 2, 3, 4, 5, 6, 7, 8]);
		rawChannel('lowprio:get:../etc/passwd', lp.CHANNEL_OPTIONS, null);
		return true;
	})()`)
	connectPages(t, a, b)

	type reset struct {
		Code   int
		Reason string
	}
	type rawRec struct {
		Reset  *reset
		Closed bool
	}
	a.waitFor("RESETs on the three bad channels", `Object.values(raw).every((r) => r.reset && r.closed)`, 20*time.Second)
	got := mustEval[map[string]rawRec](a, `raw`)
	want := map[string]string{
		"lowprio:put:ordered":       "unordered with maxRetransmits at most 2",
		"lowprio:put:gen:1000":      "unknown version",
		"lowprio:get:../etc/passwd": `".." in name`,
	}
	for label, reason := range want {
		r := got[label]
		t.Logf("%s: RESET %+v, closed %v", label, r.Reset, r.Closed)
		if r.Reset == nil || !strings.Contains(r.Reset.Reason, reason) {
			t.Errorf("%s: RESET %+v, want a reason containing %q", label, r.Reset, reason)
		}
	}

	// An option the module refuses ends that transfer with the module's reason.
	bad := mustEval[string](a, `(async () => {
		const t = await lp.put(pc, 'gen:10', null, { variant: 'cubic' });
		return t.finished.then(() => 'finished', (e) => String(e.message));
	})()`)
	if !strings.Contains(bad, `unknown variant "cubic"`) {
		t.Errorf("put with variant cubic: %q, want the unknown variant error", bad)
	}

	// The PeerConnection is still up and carries a transfer.
	mustEval[bool](a, `(async () => { track(await lp.put(pc, 'gen:300000', null)); return true; })()`)
	list := waitTransfers(b, 2, 30*time.Second) // the garbage one (failed) and this one
	var ok bool
	for _, tr := range list {
		t.Logf("b: %s %s: %s %s", tr.Verb, tr.Name, tr.State, tr.Error)
		if tr.Name == "gen:300000" {
			ok = tr.State == "done" && tr.Result.Verified == 300000
		}
		if tr.Name == "gen:1000" && tr.State != "error" {
			t.Errorf("b: the transfer that got garbage: %s, want error", tr.State)
		}
	}
	if !ok {
		t.Errorf("the transfer after the bad channels did not complete verified: %+v", list)
	}
	if st := mustEval[string](b, `pc.connectionState`); st != "connected" {
		t.Errorf("b's PeerConnection: %s", st)
	}
}

// TestLowprioModule: lib/lpgen.js computes the same generated stream as internal/lowprio/dc, at
// the start, across block and 32-bit block-number wraps (2³⁴) and near the largest offset a page
// can name (2⁵³); and the module survives calls a plain page might get wrong (a panic would stop
// its Go runtime and every transfer of the page).
func TestLowprioModule(t *testing.T) {
	srv := startStrata(t)
	b := lowprioPage(t, srv.HTTPAddr())
	got := mustEval[map[string]any](b, `(async () => {
		const api = await lp.load();
		const s = api.newSender({});
		const out = {
			text: s.onMessage('text', 0),
			writeText: s.write('abc'),
			written: s.write(new Uint8Array(5000)),
			noTime: s.onMessage(new Uint8Array([0x12, 0])), // malformed: the sender fails
		};
		let calls = 0;
		out.next = s.poll(performance.now(), () => { calls++; throw new Error('send failed'); });
		out.calls = calls;
		out.noSend = s.poll(performance.now());
		const r = api.newReceiver({});
		out.read = r.read('x').length;
		out.alive = api.newReceiver({}).received();
		return out;
	})()`)
	t.Logf("module answers: %v", got)
	for key, want := range map[string]any{"writeText": 0.0, "written": 5000.0, "read": 0.0, "alive": 0.0, "noSend": -1.0} {
		if got[key] != want {
			t.Errorf("%s: %v, want %v", key, got[key], want)
		}
	}
	for _, key := range []string{"text", "noTime"} {
		if msg, _ := got[key].(string); !strings.HasPrefix(msg, "lowprio: ") {
			t.Errorf("onMessage(%s): %q, want an error", key, got[key])
		}
	}
	// The module came gzip-encoded: under half of its 2.9 MB on the wire.
	sizes := mustEval[[]float64](b, `(e => [e.transferSize, e.decodedBodySize])(performance.getEntriesByType('resource').find((e) => e.name.endsWith('/wasm/lowprio.wasm')))`)
	t.Logf("lowprio.wasm: %.0f bytes transferred, %.0f decoded", sizes[0], sizes[1])
	if sizes[0] <= 0 || sizes[0] > sizes[1]/2 {
		t.Errorf("lowprio.wasm: %.0f bytes transferred for %.0f, want it gzipped", sizes[0], sizes[1])
	}
	if calls, _ := got["calls"].(float64); calls < 1 {
		t.Errorf("poll called a throwing send %v times, want its RESET", got["calls"])
	}
	for _, off := range []int64{0, 3, 1<<34 - 7, 1 << 34, 1<<53 - 64} {
		js := mustEval[[]int](b, fmt.Sprintf(`Array.from(lp.generatedAt(%d, new Uint8Array(64)))`, off))
		for i, got := range js {
			if want := dc.GeneratedByte(off + int64(i)); byte(got) != want {
				t.Fatalf("byte %d: JavaScript %#x, Go %#x", off+int64(i), got, want)
			}
		}
	}
}
