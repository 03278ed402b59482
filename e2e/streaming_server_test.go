package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/syncbuf"
)

// The streaming tests run against strata. With STRATA_E2E_STREAMING=janus they run, unchanged,
// against Debian's Janus 1.1.2 (started by the test on free ports, with the streaming plugin only),
// which shows that what they expect is what Janus does.
//
// Both servers get the sample mountpoints of Janus's stock configuration (1 "rtp-sample", 123
// "multistream-test", 2 and 3 the file samples) with the ids, codecs and payload types of the
// stock file, but on free UDP ports, so that the tests run next to other users of 5002 and 5004.
// Mountpoints a test needs beyond those it creates with the API (createMountpoint).
const stTargetEnv = "STRATA_E2E_STREAMING"

// ffmpegBin is Debian's ffmpeg, the RTP sender of the streaming tests.
const ffmpegBin = "/usr/bin/ffmpeg"

// samplePorts are the UDP ports of the sample RTP mountpoints in a test's server.
type samplePorts struct {
	Audio, Video int    // mountpoint 1: Opus, VP8
	Multi        [3]int // mountpoint 123: Opus (mid a), VP8 (v1), VP8 (v2)
}

// streamingServer is the server under test, with the ports its sample mountpoints listen on.
type streamingServer struct {
	*abServer
	Samples samplePorts
}

// startStreaming starts the server the streaming tests run against (strata unless
// STRATA_E2E_STREAMING=janus).
func startStreaming(t *testing.T) *streamingServer {
	t.Helper()
	free := freeUDPPorts(t, 5)
	ports := samplePorts{Audio: free[0], Video: free[1], Multi: [3]int(free[2:])}
	switch target := os.Getenv(stTargetEnv); target {
	case "", "strata":
		return &streamingServer{abServer: startStrataStreaming(t, ports), Samples: ports}
	case "janus":
		srv := startJanus(t, stTargetEnv, "libjanus_streaming.so", map[string]string{
			"janus.plugin.streaming.jcfg": janusStreamingConfig(ports),
		})
		return &streamingServer{abServer: srv, Samples: ports}
	default:
		t.Fatalf("%s=%q: want strata or janus", stTargetEnv, target)
		return nil
	}
}

// janusStreamingConfig is Janus's stock janus.plugin.streaming.jcfg (its four sample mountpoints,
// comments left out) with the RTP ports replaced.
func janusStreamingConfig(p samplePorts) string {
	return fmt.Sprintf(`general: {
}
rtp-sample: {
	type = "rtp"
	id = 1
	description = "Opus/VP8 live stream coming from external source"
	metadata = "You can use this metadata section to put any info you want!"
	audio = true
	video = true
	audioport = %d
	audiopt = 111
	audiocodec = "opus"
	videoport = %d
	videopt = 100
	videocodec = "vp8"
	secret = "adminpwd"
}
multistream-test: {
	type = "rtp"
	id = 123
	description = "Multistream test (1 audio, 2 video)"
	metadata = "This is an example of a multistream mountpoint: you'll get an audio stream and two video feeds"
	media = (
		{ type = "audio", mid = "a", label = "Audio stream", port = %d, pt = 111, codec = "opus" },
		{ type = "video", mid = "v1", label = "Video stream #1", port = %d, pt = 100, codec = "vp8" },
		{ type = "video", mid = "v2", label = "Video stream #2", port = %d, pt = 100, codec = "vp8" }
	)
	secret = "adminpwd"
}
file-live-sample: {
	type = "live"
	id = 2
	description = "a-law file source (radio broadcast)"
	filename = "/usr/share/janus/streams/radio.alaw"
	audio = true
	video = false
	secret = "adminpwd"
}
file-ondemand-sample: {
	type = "ondemand"
	id = 3
	description = "mu-law file source (music)"
	filename = "/usr/share/janus/streams/music.mulaw"
	audio = true
	video = false
	secret = "adminpwd"
}
`, p.Audio, p.Video, p.Multi[0], p.Multi[1], p.Multi[2])
}

// freeUDPPorts is n distinct UDP ports on 127.0.0.1 that nothing holds, for mountpoints. They are
// picked below the kernel's ephemeral range (32768 and up by default), so that no socket another
// test binds to port 0 can take one between this check and the server's bind, and all n are held
// until the last is found, so that none comes twice (CI once lost a sample mountpoint to either).
func freeUDPPorts(t *testing.T, n int) []int {
	t.Helper()
	var held []net.PacketConn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries == 1000 {
			t.Fatalf("no free UDP port below 32768 after %d tries", tries)
		}
		port := 20000 + rand.IntN(12000)
		c, err := net.ListenPacket("udp4", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		held = append(held, c)
		ports = append(ports, port)
	}
	return ports
}

// createMountpoint creates an RTP mountpoint with the streaming API's create (Janus 1.x's media
// list) and fails the test unless the plugin says created.
func (s *streamingServer) createMountpoint(t *testing.T, id int, description string, media []map[string]any) {
	t.Helper()
	body := map[string]any{"request": "create", "type": "rtp", "id": id, "description": description, "media": media}
	data := pluginRequest(t, s.HTTPAPI, "janus.plugin.streaming", body)
	if data["streaming"] != "created" {
		t.Fatalf("creating mountpoint %d: %v", id, data)
	}
}

// mountpointIDs is the ids of the server's list of mountpoints, sorted.
func (s *streamingServer) mountpointIDs(t *testing.T) []int {
	t.Helper()
	data := pluginRequest(t, s.HTTPAPI, "janus.plugin.streaming", map[string]any{"request": "list"})
	list, _ := data["list"].([]any)
	var ids []int
	for _, m := range list {
		if id, ok := m.(map[string]any)["id"].(float64); ok {
			ids = append(ids, int(id))
		}
	}
	slices.Sort(ids)
	return ids
}

// pluginRequest sends one synchronous plugin request over the Janus API (a session and a handle of
// its own, destroyed afterwards) and returns the plugin's data.
func pluginRequest(t *testing.T, api, plugin string, body map[string]any) map[string]any {
	t.Helper()
	post := func(url string, msg map[string]any) map[string]any {
		msg["transaction"] = "e2e"
		raw, _ := json.Marshal(msg)
		res, err := http.Post(url, "application/json", bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s %v: %v", url, msg["janus"], err)
		}
		defer res.Body.Close()
		var reply map[string]any
		if err := json.NewDecoder(res.Body).Decode(&reply); err != nil || reply["janus"] != "success" {
			t.Fatalf("%s %v: %v (%v)", url, msg["janus"], reply, err)
		}
		return reply
	}
	id := func(reply map[string]any) string {
		return fmt.Sprintf("%.0f", reply["data"].(map[string]any)["id"].(float64))
	}
	session := api + "/" + id(post(api, map[string]any{"janus": "create"}))
	defer post(session, map[string]any{"janus": "destroy"})
	handle := session + "/" + id(post(session, map[string]any{"janus": "attach", "plugin": plugin}))
	reply := post(handle, map[string]any{"janus": "message", "body": body})
	data, _ := reply["plugindata"].(map[string]any)["data"].(map[string]any)
	return data
}

// rtpOut is one ffmpeg RTP output: the stream it encodes and the UDP port it goes to.
type rtpOut struct {
	Kind string // "audio" or "video"
	Port int
	Size string // video: the frame size, e.g. "320x180"
}

// sendRTP starts ffmpeg sending plain RTP to 127.0.0.1, as a user feeding a mountpoint does: a test
// pattern (with a running clock, at 15 fps) encoded in VP8 at each video output's size, with a
// keyframe every second, and a 440 Hz tone at half of full scale in Opus. One process, one input, every output; ffmpeg is
// stopped by its PID when the test ends.
func sendRTP(t *testing.T, outs ...rtpOut) {
	t.Helper()
	if _, err := os.Stat(ffmpegBin); err != nil {
		t.Fatalf("ffmpeg is required at %s but is missing (%v).\n"+
			"Run `make test`: it installs Debian's ffmpeg package and then runs the tests.", ffmpegBin, err)
	}
	args := []string{"-hide_banner", "-loglevel", "error", "-nostdin",
		"-re", "-f", "lavfi", "-i", "testsrc=size=640x360:rate=15",
		"-re", "-f", "lavfi", "-i", "aevalsrc=0.5*sin(2*PI*440*t):s=48000"}
	var videos []rtpOut
	for _, o := range outs {
		if o.Kind == "video" {
			videos = append(videos, o)
		}
	}
	// One scaler per video output, fed by one split of the pattern.
	if len(videos) > 0 {
		graph := fmt.Sprintf("[0:v]split=%d", len(videos))
		for i := range videos {
			graph += fmt.Sprintf("[s%d]", i)
		}
		for i, v := range videos {
			graph += fmt.Sprintf(";[s%d]scale=%s[v%d]", i, strings.Replace(v.Size, "x", ":", 1), i)
		}
		args = append(args, "-filter_complex", graph)
	}
	nv := 0
	for _, o := range outs {
		url := fmt.Sprintf("rtp://127.0.0.1:%d?pkt_size=1200", o.Port)
		if o.Kind == "video" {
			args = append(args, "-map", fmt.Sprintf("[v%d]", nv), "-c:v", "libvpx", "-deadline", "realtime",
				"-cpu-used", "8", "-b:v", "300k", "-g", "15", "-an", "-f", "rtp", url)
			nv++
			continue
		}
		args = append(args, "-map", "1:a", "-c:a", "libopus", "-b:a", "32k", "-vn", "-f", "rtp", url)
	}
	logs := &syncbuf.Buffer{}
	cmd := exec.Command(ffmpegBin, args...)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting ffmpeg: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() && logs.String() != "" {
			t.Logf("ffmpeg:\n%s", logs.Tail(8<<10))
		}
	})
}

// requireStreamVideo waits until the PeerConnection pcExpr decodes video of the given size (e.g.
// "320x180") and then checks that decoding goes on (framesContinue).
func requireStreamVideo(b *browser, pcExpr, what, size string, timeout time.Duration) videoStats {
	b.t.Helper()
	waitInbound(b, pcExpr, what, timeout, func(v videoStats) bool {
		return v.FramesDecoded > 5 && fmt.Sprintf("%dx%d", v.FrameWidth, v.FrameHeight) == size
	})
	return framesContinue(b, pcExpr, what)
}

// framesContinue fails the test unless the PeerConnection pcExpr decodes 5 more frames within 5 s.
// ffmpeg sends 15 fps, so that is a third of a second's worth when nothing else runs; the margin is
// for a loaded machine, where the sender, the server and the browser all fall behind real time.
func framesContinue(b *browser, pcExpr, what string) videoStats {
	b.t.Helper()
	before, err := readInboundVideo(b, pcExpr)
	if err != nil || before == nil {
		b.t.Fatalf("%s: reading inbound video: %+v, %v", what, before, err)
	}
	return waitInbound(b, pcExpr, what+" still decoding", 5*time.Second, func(v videoStats) bool {
		return v.FramesDecoded >= before.FramesDecoded+5 && v.BytesReceived > before.BytesReceived
	})
}
