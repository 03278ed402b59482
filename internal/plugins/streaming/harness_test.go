package streaming_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media/h264writer"
	"github.com/pion/webrtc/v4/pkg/media/ivfwriter"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/peer/peertest"
	"github.com/strata-rtc/strata/internal/plugins/streaming"
)

// startServer runs strata without the sample mountpoints (each test creates what it watches, and
// lists only those), recordings in a temporary directory.
func startServer(t testing.TB, edit func(*config.Config)) *janusclient.Client {
	t.Helper()
	dir := t.TempDir()
	return janustest.StartServer(t, func(c *config.Config) {
		c.Plugins.Streaming.Mountpoints = nil
		c.Plugins.Streaming.RecordingsDir = dir
		c.Plugins.Streaming.Host = "127.0.0.1"
		if edit != nil {
			edit(c)
		}
	}, janustest.Logger())
}

func attach(t testing.TB, c *janusclient.Client) *janusclient.Handle {
	t.Helper()
	return janustest.Attach(t, c, streaming.Package)
}

// request sends a request and returns its plugindata; a Janus error fails the test.
func request(t testing.TB, h *janusclient.Handle, body map[string]any, jsep *janusclient.JSEP) (map[string]any, *janusclient.JSEP) {
	t.Helper()
	return janustest.MustRequest(t, h, body, jsep)
}

// request2 is request returning the error rather than failing.
func request2(t testing.TB, h *janusclient.Handle, body map[string]any) (map[string]any, *janusclient.JSEP, error) {
	t.Helper()
	return janustest.Request(t, h, body, nil)
}

// mountpoint is an rtp mountpoint created for a test, with the ports strata picked.
type mountpoint struct {
	id    uint64
	media []map[string]any
}

// port is the port of the stream with this mid (key "port", "port_2", "port_3" or "rtcp_port").
func (m mountpoint) port(t testing.TB, mid, key string) int {
	t.Helper()
	for _, s := range m.media {
		if s["mid"] == mid {
			if p, ok := s[key].(float64); ok {
				return int(p)
			}
		}
	}
	t.Fatalf("mountpoint %d has no %s for %s: %v", m.id, key, mid, m.media)
	return 0
}

// createRTP creates an rtp mountpoint with these streams (ports 0: strata picks).
func createRTP(t testing.TB, h *janusclient.Handle, media ...map[string]any) mountpoint {
	t.Helper()
	data, _ := request(t, h, map[string]any{"request": "create", "type": "rtp", "description": t.Name(), "media": media}, nil)
	if data["streaming"] != "created" {
		t.Fatalf("create: %v", data)
	}
	st := data["stream"].(map[string]any)
	m := mountpoint{id: uint64(st["id"].(float64))}
	for _, x := range st["ports"].([]any) {
		m.media = append(m.media, x.(map[string]any))
	}
	return m
}

func clientAPI(t testing.TB, limit *peertest.RateLimit) *webrtc.API {
	t.Helper()
	var se webrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	me := &webrtc.MediaEngine{}
	if err := me.RegisterDefaultCodecs(); err != nil {
		t.Fatal(err)
	}
	reg := &interceptor.Registry{}
	if limit != nil {
		reg.Add(limit) // first: what it drops, the transport-wide feedback reports lost
	}
	if err := webrtc.RegisterDefaultInterceptors(me, reg); err != nil {
		t.Fatal(err)
	}
	if err := webrtc.ConfigureTWCCHeaderExtensionSender(me, reg); err != nil {
		t.Fatal(err)
	}
	return webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(me), webrtc.WithInterceptorRegistry(reg))
}

// viewer is a Pion client watching a mountpoint: it writes each video track it receives to a
// file (IVF, or H.264 Annex B) so the test can decode it, and keeps the plugin's events.
type viewer struct {
	t   testing.TB
	h   *janusclient.Handle
	pc  *webrtc.PeerConnection
	dir string

	mu      sync.Mutex
	files   map[string]string // mid → file
	writers map[string]interface{ Close() error }
	packets map[string]int
	ssrcs   map[string]uint32
	sids    map[int]int // VP9 packets received per spatial layer id
	msgs    []string
	events  []map[string]any
}

// watch attaches a viewer, watches id with the extra elements, answers and starts.
func watch(t testing.TB, c *janusclient.Client, id uint64, extra map[string]any) *viewer {
	t.Helper()
	return watchLimited(t, c, id, extra, nil)
}

// watchLimited is watch with the viewer's incoming media limited to a rate (nil: none).
func watchLimited(t testing.TB, c *janusclient.Client, id uint64, extra map[string]any, limit *peertest.RateLimit) *viewer {
	t.Helper()
	v := &viewer{t: t, h: attach(t, c), dir: t.TempDir(), files: map[string]string{}, writers: map[string]interface{ Close() error }{},
		packets: map[string]int{}, ssrcs: map[string]uint32{}, sids: map[int]int{}}
	body := map[string]any{"request": "watch", "id": id}
	for k, x := range extra {
		body[k] = x
	}
	data, offer := request(t, v.h, body, nil)
	if data["result"].(map[string]any)["status"] != "preparing" || offer == nil {
		t.Fatalf("watch: %v", data)
	}
	pc, err := clientAPI(t, limit).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	v.pc = pc
	t.Cleanup(func() { _ = pc.Close(); v.closeWriters() })
	pc.OnTrack(v.read)
	pc.OnDataChannel(func(dc *webrtc.DataChannel) {
		dc.OnMessage(func(m webrtc.DataChannelMessage) {
			v.mu.Lock()
			v.msgs = append(v.msgs, string(m.Data))
			v.mu.Unlock()
		})
	})
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		t.Fatal(err)
	}
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		t.Fatal(err)
	}
	started, _ := request(t, v.h, map[string]any{"request": "start"}, janustest.CompleteLocal(t, pc, answer))
	if s := started["result"].(map[string]any)["status"]; s != "starting" && s != "started" {
		t.Fatalf("start: %v", started)
	}
	go v.collect()
	return v
}

// collect keeps the plugin's events, and the hangups as {"janus":"hangup","reason":...}.
func (v *viewer) collect() {
	for ev := range v.h.Events() {
		if ev.Janus == "hangup" {
			v.mu.Lock()
			v.events = append(v.events, map[string]any{"janus": "hangup", "reason": ev.Reason})
			v.mu.Unlock()
		}
		if ev.PluginData == nil {
			continue
		}
		var d map[string]any
		if json.Unmarshal(ev.PluginData.Data, &d) == nil {
			v.mu.Lock()
			v.events = append(v.events, d)
			v.mu.Unlock()
		}
	}
}

// read writes a track's packets: video to a file per mid.
func (v *viewer) read(tr *webrtc.TrackRemote, rcv *webrtc.RTPReceiver) {
	mid := ""
	for _, t := range v.pc.GetTransceivers() {
		if t.Receiver() == rcv {
			mid = t.Mid()
		}
	}
	var w interface {
		WriteRTP(*rtp.Packet) error
		Close() error
	}
	var file string
	mime := tr.Codec().MimeType
	switch strings.ToLower(mime) {
	case "video/vp8", "video/vp9", "video/av1":
		file = filepath.Join(v.dir, mid+".ivf")
		iw, err := ivfwriter.New(file, ivfwriter.WithCodec(mime))
		if err == nil {
			w = iw
		}
	case "video/h264":
		file = filepath.Join(v.dir, mid+".h264")
		hw, err := h264writer.New(file)
		if err == nil {
			w = hw
		}
	}
	v.mu.Lock()
	if w != nil {
		v.files[mid], v.writers[mid] = file, w
	}
	v.mu.Unlock()
	for {
		pkt, _, err := tr.ReadRTP()
		if err != nil {
			return
		}
		v.mu.Lock()
		v.packets[mid]++
		v.ssrcs[mid] = pkt.SSRC
		if strings.EqualFold(mime, "video/vp9") && len(pkt.Payload) > 3 && pkt.Payload[0]&0x20 != 0 {
			idx := 1 // the layer index follows the picture id
			if pkt.Payload[0]&0x80 != 0 {
				idx += 1 + int(pkt.Payload[1]>>7)
			}
			if idx < len(pkt.Payload) {
				v.sids[int(pkt.Payload[idx]>>1&7)]++
			}
		}
		if w != nil && v.writers[mid] != nil {
			_ = w.WriteRTP(pkt)
		}
		v.mu.Unlock()
	}
}

func (v *viewer) closeWriters() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for mid, w := range v.writers {
		_ = w.Close()
		delete(v.writers, mid)
	}
}

func (v *viewer) count(mid string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.packets[mid]
}

// waitPackets waits until the viewer has n packets of mid.
func (v *viewer) waitPackets(mid string, n int, within time.Duration) {
	v.t.Helper()
	deadline := time.Now().Add(within)
	for v.count(mid) < n {
		if time.Now().After(deadline) {
			v.t.Fatalf("viewer got %d packets of %s, want %d", v.count(mid), mid, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFrames waits until n frames of mid decode from what the viewer received (polling a copy, so
// a slow machine makes it wait longer rather than fail); the caller then checks the whole file
// with decodedFrames.
func (v *viewer) waitFrames(mid string, n int, within time.Duration) {
	v.t.Helper()
	deadline := time.Now().Add(within)
	for {
		got, _ := v.framesSoFar(mid)
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			v.t.Errorf("viewer decoded %d frames of %s within %v, want %d", got, mid, within, n)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitEvent waits for an event satisfying ok.
func (v *viewer) waitEvent(within time.Duration, ok func(map[string]any) bool) map[string]any {
	v.t.Helper()
	deadline := time.Now().Add(within)
	for {
		v.mu.Lock()
		for _, e := range v.events {
			if ok(e) {
				v.mu.Unlock()
				return e
			}
		}
		v.mu.Unlock()
		if time.Now().After(deadline) {
			v.t.Fatalf("event not received; got %v", v.events)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// decodedFrames closes the viewer's file of mid and counts the frames ffmpeg decodes in it; any
// decoding error fails the test.
func (v *viewer) decodedFrames(mid string) (frames int, width int) {
	v.t.Helper()
	v.mu.Lock()
	file := v.files[mid]
	if w := v.writers[mid]; w != nil {
		_ = w.Close()
		delete(v.writers, mid)
	}
	v.mu.Unlock()
	if file == "" {
		v.t.Fatalf("no video received on %s", mid)
	}
	return countFrames(v.t, file)
}

// countFrames decodes a file with ffprobe: the frames decoded, and the width of the last one
// (decoded, not the container's header). Any decoding error fails the test.
func countFrames(t testing.TB, file string) (int, int) {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=width",
		"-of", "csv=p=0", file).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe %s: %v: %s", file, err, out)
	}
	var n, w int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if x, err := strconv.Atoi(strings.Trim(line, ",")); err == nil {
			n, w = n+1, x
		}
	}
	msg, err := exec.Command("ffmpeg", "-v", "error", "-i", file, "-f", "null", "-").CombinedOutput()
	var errs []string
	for _, line := range strings.Split(strings.TrimSpace(string(msg)), "\n") {
		// The IVF timestamps are the RTP timestamps as received: after a layer switch two pictures
		// may share one, which the null muxer reports; that is not a decoding error.
		if line != "" && !strings.Contains(line, "non monotonically increasing dts") {
			errs = append(errs, line)
		}
	}
	if err != nil || len(errs) > 0 {
		t.Errorf("decoding %s: %v: %s", file, err, strings.Join(errs, "\n"))
	}
	return n, w
}

// ffmpeg runs ffmpeg with args until the test ends.
func ffmpeg(t testing.TB, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "ffmpeg", append([]string{"-hide_banner", "-loglevel", "error", "-nostdin"}, args...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("ffmpeg: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// testsrc is ffmpeg's input of a moving test picture at size and 30 fps, and a tone.
func testsrc(size string) []string {
	return []string{"-re", "-f", "lavfi", "-i", "testsrc=size=" + size + ":rate=30",
		"-re", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"}
}

// rtpOut is an ffmpeg RTP output to a local port with a payload type.
func rtpOut(port, pt int) []string {
	return []string{"-payload_type", strconv.Itoa(pt), "-f", "rtp", fmt.Sprintf("rtp://127.0.0.1:%d?pkt_size=1200", port)}
}

// videoArgs encode the first input for RTP with codec (vp8, vp9, h264) at a keyframe a second.
func videoArgs(codec string, bitrate string) []string {
	base := []string{"-map", "0:v", "-g", "30", "-b:v", bitrate}
	switch codec {
	case "vp9":
		return append(base, "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-row-mt", "1", "-strict", "experimental")
	case "h264":
		return append(base, "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-profile:v", "baseline",
			"-pix_fmt", "yuv420p", "-bsf:v", "dump_extra")
	}
	return append(base, "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8")
}

// audioArgs encode the second input as Opus.
func audioArgs() []string {
	return []string{"-map", "1:a", "-c:a", "libopus", "-b:a", "32k"}
}

// sendUDP sends datagrams to a local port.
func sendUDP(t testing.TB, port int, pkts ...[]byte) {
	t.Helper()
	c, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range pkts {
		_, _ = c.Write(p)
	}
}

// layerWidth is the width of the newest picture the viewer received of v so far (0: none).
func (v *viewer) layerWidth() int {
	_, w := v.framesSoFar("v")
	return w
}

// framesSoFar decodes a copy of what the viewer received of mid so far: the frames, and the width
// of the newest (0, 0: none).
func (v *viewer) framesSoFar(mid string) (frames, width int) {
	v.t.Helper()
	v.mu.Lock()
	file := v.files[mid]
	var data []byte
	if file != "" {
		data, _ = os.ReadFile(file)
	}
	v.mu.Unlock()
	if len(data) == 0 {
		return 0, 0
	}
	cp := file + ".now" + filepath.Ext(file) // ffprobe goes by the extension too
	if err := os.WriteFile(cp, data, 0o644); err != nil {
		v.t.Fatal(err)
	}
	out, _ := exec.Command("ffprobe", "-v", "quiet", "-select_streams", "v:0", "-show_entries", "frame=width",
		"-of", "csv=p=0", cp).Output()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if x, err := strconv.Atoi(strings.Trim(line, ",")); err == nil {
			frames, width = frames+1, x
		}
	}
	return frames, width
}

// freePorts finds n free UDP ports (released before returning).
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var out []int
	for range n {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4zero})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c.LocalAddr().(*net.UDPAddr).Port)
		defer c.Close()
	}
	return out
}

// holdPort binds a UDP port for the test's duration.
func holdPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4zero})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c.LocalAddr().(*net.UDPAddr).Port
}
