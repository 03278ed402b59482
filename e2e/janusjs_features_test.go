package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/server"
)

// featuresRoom is the VP8 room of TestJanusJSVideoRoomFeatures. Its talk detection averages 25
// packets (0.5 s) and counts an average up to 90 dBov as talking: Chromium's fake microphone beeps
// for a moment twice a second, which averages 71–80 dBov, so Janus's default threshold (25 dBov,
// a speaker close to the microphone) never fires with it; silence is 127.
const (
	featuresRoom    = 5104
	featuresOptions = `"videocodec":"vp8","audiolevel_event":true,"audio_active_packets":25,"audio_level_average":90`
)

// TestJanusJSVideoRoomFeatures runs the videoroom with the unmodified janus.js, all participants in
// one browser page (testdata/janusjs-features.html, one janus.js session each, over the
// WebSocket): Alice publishes camera (640×360) and microphone with join + publish, a subscriber
// watches her video; then
//
//   - Talking: Alice's beeping microphone brings the `talking` event with her id and audio mid
//     (strata tells every participant, Alice included), and disabling her audio track (silence)
//     `stopped-talking`;
//   - JoinAndConfigure: Bob publishes a 320×240 camera with one joinandconfigure carrying the
//     offer: the `joined` event carries strata's answer, Alice hears of his stream, strata
//     receives it;
//   - Switch: the subscriber's video m-line switches from Alice to Bob with `switch`: `switched`
//     names Bob's feed, no new offer is made, and the decoded video goes on at Bob's 4:3 size;
//   - Moderate: muting Bob's video with `moderate` stops the subscriber's frames and tells the
//     room (`moderation: muted`, as Janus does); unmuting brings them back;
//   - ICERestart: `configure` with `restart: true` gets the subscriber a new offer with new ICE
//     credentials, and Bob renegotiates with janus.js's iceRestart; the subscriber's video keeps
//     being decoded through both.
func TestJanusJSVideoRoomFeatures(t *testing.T) {
	srv := startStrata(t)
	createRoom(t, srv, featuresRoom, featuresOptions)
	pages := servePage(t)
	page := openFeatures(newBrowser(t), pages.URL, "ws://"+srv.WSAddr())
	page.requireCleanTeardown(srv)

	alice := page.publish(fmt.Sprintf(`{room: %d, display: 'alice', audio: true, video: 'stdres-16:9'}`, featuresRoom))
	sub := page.subscribe(featuresRoom, fmt.Sprintf(`[{feed: %d, mid: %q}]`, alice.Feed, alice.Mids["video"]))
	got := requireDecodedVideo(page.browser, sub.pc(), "Alice's video at the subscriber", 15*time.Second)
	if got.FrameWidth*9 != got.FrameHeight*16 {
		t.Fatalf("Alice's video arrives at %dx%d, want 16:9", got.FrameWidth, got.FrameHeight)
	}

	t.Run("Talking", func(t *testing.T) { testTalking(t, page.use(t), alice) })
	// Bob lives on for the later subtests, so he publishes here; JoinAndConfigure checks how.
	bob := page.publish(fmt.Sprintf(`{room: %d, display: 'bob', video: 'lowres', oneStep: true}`, featuresRoom))
	if !t.Run("JoinAndConfigure", func(t *testing.T) { testJoinAndConfigure(t, srv, page.use(t), alice, bob) }) {
		return
	}
	if !t.Run("Switch", func(t *testing.T) { testSwitch(t, page.use(t), sub, bob) }) {
		return
	}
	t.Run("Moderate", func(t *testing.T) { testModerate(t, srv, page.use(t), sub, bob, alice) })
	t.Run("ICERestart", func(t *testing.T) { testICERestart(t, page.use(t), sub, bob) })
	page.requireCleanConsole("during the calls")
	page.destroy(sub) // before Bob, who was published after it (see destroyAtEnd)
}

// hasMessage is the JavaScript condition that a participant received an event matching cond (a
// JavaScript function of the message).
func hasMessage(p participant, cond string) string {
	return fmt.Sprintf(`%s.messages.some(%s)`, p.part(), cond)
}

func testTalking(t *testing.T, page featurePage, alice participant) {
	talking := fmt.Sprintf(`(m) => m.videoroom === 'talking' && m.id === %d && m.mid === %q`, alice.Feed, alice.Mids["audio"])
	page.waitFor("the talking event for Alice's beeping microphone", hasMessage(alice, talking), 10*time.Second)
	level, _ := eval[float64](page.browser, fmt.Sprintf(`%s.messages.find(%s)['audio-level-dBov-avg']`, alice.part(), talking))
	t.Logf("talking: average level %.0f dBov", level)

	if _, err := eval[bool](page.browser, fmt.Sprintf(`(%s.pc.getSenders().find((s) => s.track && s.track.kind === 'audio').track.enabled = false)`, alice.part())); err != nil {
		t.Fatalf("disabling Alice's microphone: %v", err)
	}
	page.waitFor("stopped-talking once Alice's microphone sends silence",
		hasMessage(alice, fmt.Sprintf(`(m) => m.videoroom === 'stopped-talking' && m.id === %d`, alice.Feed)), 10*time.Second)
}

func testJoinAndConfigure(t *testing.T, srv *server.Server, page featurePage, alice, bob participant) {
	jseps, err := eval[[]map[string]string](page.browser, bob.part()+".jseps")
	if err != nil || len(jseps) != 1 || jseps[0]["videoroom"] != "joined" || jseps[0]["type"] != "answer" {
		t.Fatalf("Bob's JSEPs from strata: %v (err %v), want one answer, on the joined event", jseps, err)
	}
	if configured, _ := eval[bool](page.browser, hasMessage(bob, `(m) => m.configured`)); configured {
		t.Fatalf("joinandconfigure answered with a separate configured event")
	}
	page.waitFor("Alice to hear of Bob's stream", hasMessage(alice, fmt.Sprintf(
		`(m) => (m.publishers || []).some((p) => p.id === %d && p.streams.some((s) => s.type === 'video' && s.mid === %q))`,
		bob.Feed, bob.Mids["video"])), 5*time.Second)
	requirePublisherStream(t, srv, bob.Feed, "vp8")
}

func testSwitch(t *testing.T, page featurePage, sub, bob participant) {
	reply := page.request(sub, fmt.Sprintf(`{request: 'switch', streams: [{feed: %d, mid: %q, sub_mid: %q}]}`,
		bob.Feed, bob.Mids["video"], sub.Mids["video"]), `(m) => m.switched`)
	var switched struct {
		Switched string `json:"switched"`
		Changes  int    `json:"changes"`
		Streams  []struct {
			Mid    string `json:"mid"`
			FeedID uint64 `json:"feed_id"`
		} `json:"streams"`
	}
	remarshal(t, reply, &switched)
	if switched.Switched != "ok" || switched.Changes != 1 || len(switched.Streams) != 1 ||
		switched.Streams[0].Mid != sub.Mids["video"] || switched.Streams[0].FeedID != bob.Feed {
		t.Fatalf("switch answered %+v, want ok, 1 change, mid %s fed by %d", switched, sub.Mids["video"], bob.Feed)
	}
	got := waitInbound(page.browser, sub.pc(), "Bob's 4:3 video at the subscriber", 10*time.Second, func(v videoStats) bool {
		return v.FrameWidth > 0 && v.FrameWidth*3 == v.FrameHeight*4
	})
	framesFlowing(page.browser, sub.pc(), "Bob's video after the switch")
	if offers, _ := eval[int](page.browser, sub.part()+".offers"); offers != 1 {
		t.Fatalf("the subscriber got %d offers, want 1: switch must not renegotiate", offers)
	}
	t.Logf("after the switch: %dx%d", got.FrameWidth, got.FrameHeight)
	page.screenshot("janusjs-features-switched")
}

func testModerate(t *testing.T, srv *server.Server, page featurePage, sub, bob, alice participant) {
	moderate := func(mute bool) {
		reply := roomRequest(t, srv, fmt.Sprintf(`{"request":"moderate","room":%d,"id":%d,"mid":%q,"mute":%v}`,
			featuresRoom, bob.Feed, bob.Mids["video"], mute))
		if reply["videoroom"] != "success" {
			t.Fatalf("moderate mute=%v: %v", mute, reply)
		}
		state := map[bool]string{true: "muted", false: "unmuted"}[mute]
		for _, p := range []participant{bob, alice} {
			page.waitFor(fmt.Sprintf("%s to hear that Bob's video is %s", p.Key, state), hasMessage(p, fmt.Sprintf(
				`(m) => m.videoroom === 'event' && m.id === %d && m.mid === %q && m.moderation === %q`, bob.Feed, bob.Mids["video"], state)), 5*time.Second)
		}
	}
	moderate(true)
	start := time.Now()
	var stopped *videoStats
	for stopped == nil {
		before, err1 := readInboundVideo(page.browser, sub.pc())
		time.Sleep(time.Second)
		after, err2 := readInboundVideo(page.browser, sub.pc())
		if err1 == nil && err2 == nil && before != nil && after != nil && after.FramesDecoded <= before.FramesDecoded+1 {
			stopped = after
		} else if time.Since(start) > 6*time.Second {
			t.Fatalf("the subscriber still decodes Bob's moderated video: %+v, then %+v a second later", before, after)
		}
	}
	t.Logf("muted: the subscriber's frames stopped at %d, %v after moderate", stopped.FramesDecoded, time.Since(start).Round(100*time.Millisecond))

	moderate(false)
	waitInbound(page.browser, sub.pc(), "frames again after unmuting", 10*time.Second, func(v videoStats) bool {
		return v.FramesDecoded > stopped.FramesDecoded+5
	})
	framesFlowing(page.browser, sub.pc(), "Bob's video after unmuting")
}

// iceUfrag is the JavaScript expression of the ICE username fragment of a session description.
func iceUfrag(desc string) string {
	return fmt.Sprintf(`(%s.sdp.match(/a=ice-ufrag:(\S+)/) || [])[1]`, desc)
}

func testICERestart(t *testing.T, page featurePage, sub, bob participant) {
	ufrags := func(p participant) [2]string {
		local, err1 := eval[string](page.browser, iceUfrag(p.pc()+".localDescription"))
		remote, err2 := eval[string](page.browser, iceUfrag(p.pc()+".remoteDescription"))
		if err1 != nil || err2 != nil || local == "" || remote == "" {
			t.Fatalf("%s: reading ICE ufrags: %q %q (%v, %v)", p.Key, local, remote, err1, err2)
		}
		return [2]string{local, remote}
	}

	before := ufrags(sub)
	started, _ := eval[int](page.browser, fmt.Sprintf(`%s.messages.filter((m) => m.started === 'ok').length`, sub.part()))
	page.request(sub, `{request: 'configure', restart: true}`, `(m) => m.configured === 'ok'`)
	page.waitFor("the subscriber's answer to the restart offer to be started", fmt.Sprintf(
		`%s.offers === 2 && %s.messages.filter((m) => m.started === 'ok').length === %d`, sub.part(), sub.part(), started+1), 10*time.Second)
	if after := ufrags(sub); after[0] == before[0] || after[1] == before[1] {
		t.Fatalf("the subscriber's ICE credentials did not change: local %s → %s, strata's %s → %s", before[0], after[0], before[1], after[1])
	}
	page.waitFor("the subscriber's ICE to reconnect", fmt.Sprintf(`['connected', 'completed'].includes(%s.iceConnectionState)`, sub.pc()), 10*time.Second)
	framesFlowing(page.browser, sub.pc(), "the video after the subscriber's ICE restart")

	before = ufrags(bob)
	if _, err := evalWithin[map[string]any](page.browser, 15*time.Second, fmt.Sprintf(`feat.restartPublisher(%q)`, bob.Key)); err != nil {
		t.Fatalf("Bob's ICE restart: %v", err)
	}
	if after := ufrags(bob); after[0] == before[0] || after[1] == before[1] {
		t.Fatalf("Bob's ICE credentials did not change: local %s → %s, strata's %s → %s", before[0], after[0], before[1], after[1])
	}
	page.waitFor("Bob's ICE to reconnect", fmt.Sprintf(`['connected', 'completed'].includes(%s.iceConnectionState)`, bob.pc()), 10*time.Second)
	framesFlowing(page.browser, sub.pc(), "the video after Bob's ICE restart")
}

// remarshal converts a decoded JSON value into a typed one.
func remarshal(t *testing.T, from, into any) {
	t.Helper()
	raw, err := json.Marshal(from)
	if err == nil {
		err = json.Unmarshal(raw, into)
	}
	if err != nil {
		t.Fatalf("decoding %v: %v", from, err)
	}
}
