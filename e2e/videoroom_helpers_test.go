package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/server"
)

// testRoom is the room the videoroom tests create through the API. The configured demo room 1234
// caps publishers at 128 kbit/s (by REMB), which leaves Chromium only its lowest simulcast layer;
// this one allows all three layers of a 1280×720 camera.
const (
	testRoom        = 4321
	testRoomBitrate = 2500000
)

// createTestRoom creates testRoom through the admin API's message_plugin (the videoroom's `create`).
func createTestRoom(t *testing.T, srv *server.Server) {
	t.Helper()
	createRoom(t, srv, testRoom, fmt.Sprintf(`"description":"e2e simulcast","bitrate":%d,"videocodec":"vp8"`, testRoomBitrate))
}

// videoroomHandle is the videoroom's plugin_specific part of handle_info, for either role.
type videoroomHandle struct {
	Type     string            `json:"type"`
	Room     uint64            `json:"room"`
	ID       uint64            `json:"id"`
	Estimate int64             `json:"estimate_bps"`
	Streams  []videoroomStream `json:"streams"`
}

// videoroomStream is one stream of a videoroom handle in handle_info: a published m-line or a
// subscription's m-line.
type videoroomStream struct {
	Type      string `json:"type"`
	Mid       string `json:"mid"`
	FeedID    uint64 `json:"feed_id"`
	Codec     string `json:"codec"`
	Simulcast bool   `json:"simulcast"`
	SVC       bool   `json:"svc"`
	Packets   uint64 `json:"packets"`
	Current   string `json:"current"`
	Target    string `json:"target"`
	Max       string `json:"max"`
	Switches  uint64 `json:"switches"`
}

// videoroomHandles returns the plugin state of every videoroom handle on srv.
func videoroomHandles(t *testing.T, srv *server.Server) []videoroomHandle {
	t.Helper()
	var out []videoroomHandle
	for _, sid := range adminSessions(t, srv) {
		var handles struct {
			Handles []json.Number `json:"handles"`
		}
		adminCall(t, srv, fmt.Sprintf(`{"janus":"list_handles","session_id":%s}`, sid), &handles)
		for _, hid := range handles.Handles {
			var info struct {
				Info struct {
					Plugin   string          `json:"plugin"`
					Specific videoroomHandle `json:"plugin_specific"`
				} `json:"info"`
			}
			adminCall(t, srv, fmt.Sprintf(`{"janus":"handle_info","session_id":%s,"handle_id":%s}`, sid, hid), &info)
			if info.Info.Plugin == "janus.plugin.videoroom" {
				out = append(out, info.Info.Specific)
			}
		}
	}
	return out
}

// requireSimulcastPublisher checks strata's side of the publication: a publisher in testRoom whose
// VP8 video stream is marked simulcast and has received packets.
func requireSimulcastPublisher(t *testing.T, srv *server.Server) {
	t.Helper()
	for _, h := range videoroomHandles(t, srv) {
		if h.Type != "publisher" || h.Room != testRoom {
			continue
		}
		for _, st := range h.Streams {
			if st.Type == "video" && st.Simulcast && strings.EqualFold(st.Codec, "vp8") && st.Packets > 0 {
				return
			}
		}
	}
	t.Fatalf("handle_info shows no publisher in room %d with a simulcast VP8 stream: %+v", testRoom, videoroomHandles(t, srv))
}

// logSubscribers logs what strata forwards to each subscriber: estimate, layers and switches.
func logSubscribers(t *testing.T, srv *server.Server) {
	t.Helper()
	for _, h := range videoroomHandles(t, srv) {
		if h.Type != "subscriber" {
			continue
		}
		for _, st := range h.Streams {
			if st.Type == "video" {
				t.Logf("strata → subscriber (estimate %d kbit/s): mid %s current %s target %s max %s, %d switches",
					h.Estimate/1000, st.Mid, st.Current, st.Target, st.Max, st.Switches)
			}
		}
	}
}

// sentLayer is one outbound-rtp video entry of a publishing PeerConnection: one simulcast encoding.
type sentLayer struct {
	RID           string  `json:"rid"`
	Active        bool    `json:"active"`
	FramesEncoded int     `json:"framesEncoded"`
	BytesSent     float64 `json:"bytesSent"`
	FrameWidth    int     `json:"frameWidth"`
	FrameHeight   int     `json:"frameHeight"`
	Limitation    string  `json:"qualityLimitationReason"`
}

const outboundVideoJS = `(async () => {
  const pc = %s;
  if (!pc) return [];
  const out = [];
  (await pc.getStats()).forEach((s) => {
    if (s.type !== 'outbound-rtp' || s.kind !== 'video') return;
    out.push({ rid: s.rid || '', active: s.active !== false, framesEncoded: s.framesEncoded || 0,
               bytesSent: s.bytesSent || 0, frameWidth: s.frameWidth || 0, frameHeight: s.frameHeight || 0,
               qualityLimitationReason: s.qualityLimitationReason || '' });
  });
  return out;
})()`

func readSentLayers(b *browser, pcExpr string) ([]sentLayer, error) {
	return eval[[]sentLayer](b, fmt.Sprintf(outboundVideoJS, pcExpr))
}

// simulcastWidths are the frame widths of the lowest and the highest simulcast layer being sent.
type simulcastWidths struct{ low, high int }

// requireThreeLayersSent waits until the publishing PeerConnection sends three simulcast encodings
// (three distinct RIDs), each active, encoding new frames and sending new bytes over one second, at
// three different resolutions. Chromium turns the upper layers on only as its bandwidth estimate
// towards strata grows, so this can take a few seconds.
func requireThreeLayersSent(b *browser, pcExpr string, timeout time.Duration) simulcastWidths {
	b.t.Helper()
	start := time.Now()
	var last []sentLayer
	for time.Since(start) < timeout {
		before, err := readSentLayers(b, pcExpr)
		time.Sleep(time.Second)
		after, err2 := readSentLayers(b, pcExpr)
		if err != nil || err2 != nil {
			last = nil
			continue
		}
		last = after
		if widths, ok := threeFlowingLayers(before, after); ok {
			b.t.Logf("publisher sends three layers %v after it joined: %s", time.Since(start).Round(100*time.Millisecond), describeLayers(after))
			return widths
		}
	}
	b.t.Fatalf("the publisher did not send three simulcast layers within %v: %s", timeout, describeLayers(last))
	return simulcastWidths{}
}

func threeFlowingLayers(before, after []sentLayer) (simulcastWidths, bool) {
	var flowing []sentLayer
	for _, a := range after {
		i := slices.IndexFunc(before, func(b sentLayer) bool { return b.RID == a.RID })
		if i >= 0 && a.FramesEncoded >= before[i].FramesEncoded+5 && a.BytesSent > before[i].BytesSent {
			flowing = append(flowing, a)
		}
	}
	return layerWidths(flowing)
}

// layerWidths returns the lowest and highest widths of three active layers with distinct RIDs and
// distinct resolutions; ok is false unless there are exactly such three.
func layerWidths(layers []sentLayer) (w simulcastWidths, ok bool) {
	var widths []int
	rids := map[string]bool{}
	for _, l := range layers {
		if l.RID == "" || rids[l.RID] || !l.Active || l.FrameWidth == 0 {
			continue
		}
		rids[l.RID] = true
		widths = append(widths, l.FrameWidth)
	}
	slices.Sort(widths)
	if len(widths) != 3 || widths[0] == widths[1] || widths[1] == widths[2] {
		return w, false
	}
	return simulcastWidths{low: widths[0], high: widths[2]}, true
}

func describeLayers(layers []sentLayer) string {
	var parts []string
	for _, l := range layers {
		parts = append(parts, fmt.Sprintf("rid %q active=%v %dx%d %d frames %.0f bytes (limited by %q)",
			l.RID, l.Active, l.FrameWidth, l.FrameHeight, l.FramesEncoded, l.BytesSent, l.Limitation))
	}
	if len(parts) == 0 {
		return "no outbound video"
	}
	return strings.Join(parts, "; ")
}

// substreamSwitch drives one subscriber through the simulcast layers with `configure`. It waits
// until the subscriber receives a layer above the lowest (the allocator climbs there on its own as
// the subscriber's estimate grows); then substream 0 must bring the lowest layer, narrower; then
// substream 2 a layer above it again, wider. strata treats substream as a cap on what the
// subscriber's path carries, and on this shared two-core machine a CPU-starved browser can look
// like a congested path, so only "above the lowest" is required, not the top layer: how high and
// how fast the allocator climbs is for the Go integration tests, which control the path. configure
// sends the request for one substream from the subscriber's page and resolves when strata
// acknowledged it. pubPC and subPC locate the PeerConnections whose stats are compared: the
// publisher's current layer widths and the subscriber's received width.
type substreamSwitch struct {
	t            *testing.T
	srv          *server.Server
	pub, sub     *browser
	pubPC, subPC string
	configure    func(substream int) string
}

func (s substreamSwitch) run() {
	s.t.Helper()
	aboveLowest := func(got int, w simulcastWidths) bool { return got > w.low }
	before := s.waitWidth("a layer above the lowest before any configure", 20*time.Second, aboveLowest)
	s.request(0)
	low := s.waitWidth("the lowest layer after configure substream 0", 10*time.Second, func(got int, w simulcastWidths) bool { return got == w.low })
	if low >= before {
		s.t.Fatalf("substream 0 did not make the received video smaller: %d px wide, then %d", before, low)
	}
	s.request(2)
	after := s.waitWidth("a layer above the lowest after configure substream 2", 15*time.Second, aboveLowest)
	if after <= low {
		s.t.Fatalf("substream 2 did not make the received video larger: %d px wide, then %d", low, after)
	}
}

// request sends configure with one substream and checks that strata applied it: in handle_info,
// the subscription to the simulcast publisher's video has that spatial cap.
func (s substreamSwitch) request(substream int) {
	s.t.Helper()
	if _, err := eval[any](s.sub, s.configure(substream)); err != nil {
		s.t.Fatalf("configure substream %d: %v", substream, err)
	}
	handles := videoroomHandles(s.t, s.srv)
	simulcastFeeds := map[uint64]bool{}
	for _, h := range handles {
		for _, st := range h.Streams {
			if h.Type == "publisher" && st.Simulcast {
				simulcastFeeds[h.ID] = true
			}
		}
	}
	var caps []string
	for _, h := range handles {
		for _, st := range h.Streams {
			if h.Type == "subscriber" && st.Type == "video" && simulcastFeeds[st.FeedID] {
				caps = append(caps, st.Max)
			}
		}
	}
	if len(caps) != 1 || !strings.HasPrefix(caps[0], fmt.Sprintf("s%dt", substream)) {
		s.t.Fatalf("after configure substream %d, handle_info shows the cap %v on the subscription to the simulcast feed", substream, caps)
	}
}

// waitWidth polls until the subscriber decodes frames whose width satisfies ok, compared with what
// the publisher currently sends, then checks that decoding goes on; it returns that width.
func (s substreamSwitch) waitWidth(what string, timeout time.Duration, ok func(got int, sent simulcastWidths) bool) int {
	s.t.Helper()
	start := time.Now()
	var v *videoStats
	var sent []sentLayer
	for {
		var err error
		v, err = readInboundVideo(s.sub, s.subPC)
		sent, _ = readSentLayers(s.pub, s.pubPC)
		if widths, three := layerWidths(sent); err == nil && v != nil && three && ok(v.FrameWidth, widths) {
			break
		}
		if time.Since(start) > timeout {
			logSubscribers(s.t, s.srv)
			s.t.Fatalf("the subscriber did not receive %s within %v: received %+v; publisher sends %s",
				what, timeout, v, describeLayers(sent))
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Logf("%s: %dx%d after %v", what, v.FrameWidth, v.FrameHeight, time.Since(start).Round(100*time.Millisecond))
	time.Sleep(time.Second)
	again, err := readInboundVideo(s.sub, s.subPC)
	if err != nil || again == nil || again.FramesDecoded < v.FramesDecoded+5 {
		s.t.Fatalf("decoding stalled after reaching %s: %+v then %+v (err %v)", what, v, again, err)
	}
	return v.FrameWidth
}
