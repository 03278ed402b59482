package streaming_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/plugins/streaming"
	"github.com/strata-rtc/strata/internal/record"
)

// wantError sends a request (synchronous or not) and checks Janus's code and reason.
func wantError(t *testing.T, h *janusclient.Handle, body any, code int, reason string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := h.Message(ctx, body, nil)
	if got := janusclient.Code(err); got != code || reason != "" && !strings.Contains(err.Error(), reason) {
		t.Errorf("%v: %v (code %d), want %d %q", body, err, got, code, reason)
	}
}

// TestErrors: the errors the plugin gives through the API, with Janus's code and reason (a body
// that is not an object is the gateway's 467 before it reaches the plugin; 458 needs a mountpoint
// that is not RTP).
func TestErrors(t *testing.T) {
	c := startServer(t, func(c *config.Config) { c.Plugins.Streaming.AdminKey = "adm" })
	h := attach(t, c)
	video := map[string]any{"type": "video", "mid": "v", "port": 0, "pt": 100, "codec": "vp8"}
	created, _ := request(t, h, map[string]any{"request": "create", "admin_key": "adm", "type": "rtp", "id": 77,
		"secret": "s3", "pin": "p1", "media": []any{video}}, nil)
	if created["streaming"] != "created" {
		t.Fatalf("create: %v", created)
	}
	cases := []struct {
		body   any
		code   int
		reason string
	}{
		{map[string]any{"nothing": 1}, 453, "Missing mandatory element (request)"},
		{map[string]any{"request": "dance"}, 452, "Unknown request 'dance'"},
		{map[string]any{"request": "info"}, 453, "Missing mandatory element (id)"},
		{map[string]any{"request": "info", "id": "77"}, 454, "Invalid element type (id should be a positive integer)"},
		{map[string]any{"request": "info", "id": 9}, 455, "No such mountpoint/stream 9"},
		{map[string]any{"request": "list", "admin_key": "bad"}, 457, "Unauthorized (wrong admin_key)"},
		{map[string]any{"request": "create", "type": "rtp", "media": []any{video}}, 453, "Missing mandatory element (admin_key)"},
		{map[string]any{"request": "create", "admin_key": "no", "type": "rtp", "media": []any{video}}, 457, "wrong admin_key"},
		{map[string]any{"request": "create", "admin_key": "adm", "type": "rtp", "id": 77, "media": []any{video}}, 456, "already exists"},
		{map[string]any{"request": "create", "admin_key": "adm", "type": "rtp", "permanent": true, "media": []any{video}}, 470, "No configuration file"},
		{map[string]any{"request": "create", "admin_key": "adm", "type": "rtp", "media": []any{}}, 456, "no audio or video"},
		{map[string]any{"request": "create", "admin_key": "adm", "type": "rtp", "media": []any{map[string]any{"type": "video", "mid": "v", "port": 0, "codec": "mpeg2"}}}, 456, "unsupported codec"},
		{map[string]any{"request": "create", "admin_key": "adm", "type": "flv"}, 454, "Unknown stream type 'flv'"},
		{map[string]any{"request": "destroy", "id": 77}, 453, "Missing mandatory element (secret)"},
		{map[string]any{"request": "destroy", "id": 77, "secret": 3}, 454, "secret should be a string"},
		{map[string]any{"request": "destroy", "id": 77, "secret": "x"}, 457, "Unauthorized (wrong secret)"},
		{map[string]any{"request": "edit", "id": 78, "secret": "s3"}, 455, "No such mountpoint (78)"},
		{map[string]any{"request": "edit", "id": 77, "secret": "s3", "permanent": true}, 470, "No configuration file"},
		{map[string]any{"request": "disable", "id": 77, "secret": "s3", "stop_recording": "yes"}, 454, "stop_recording should be a boolean"},
		{map[string]any{"request": "recording", "action": "pause", "id": 77}, 454, "Invalid action (should be start|stop)"},
		{map[string]any{"request": "recording", "action": "start", "id": 77, "secret": "s3"}, 452, "Missing audio, video and/or data"},
		{map[string]any{"request": "recording", "action": "start", "id": 77, "secret": "s3",
			"media": []any{map[string]any{"mid": "v", "filename": "/etc/strata-escape"}}}, 459, "Error starting recorder for video"},
		{map[string]any{"request": "kick", "id": 77, "secret": "s3", "viewer": 5}, 455, "No such viewer 5"},
		{map[string]any{"request": "kick_all", "id": 78}, 455, "No such mountpoint/stream 78"},
		{map[string]any{"request": "start"}, 455, "Can't start: no mountpoint set"},
		{map[string]any{"request": "pause"}, 455, "Can't start: no mountpoint set"},
		{map[string]any{"request": "configure", "substream": "x"}, 455, "Can't configure: not on a mountpoint"},
		{map[string]any{"request": "switch"}, 455, "Can't switch: not on a mountpoint"},
		{map[string]any{"request": "watch"}, 453, "Missing mandatory element (id)"},
		{map[string]any{"request": "watch", "id": 9}, 455, "No such mountpoint/stream 9"},
		{map[string]any{"request": "watch", "id": 77}, 453, "Missing mandatory element (pin)"},
		{map[string]any{"request": "watch", "id": 77, "pin": "no"}, 457, "Unauthorized (wrong pin)"},
		{map[string]any{"request": "watch", "id": 77, "pin": "p1", "media": []any{"zz"}}, 452, "Can't offer an SDP with no audio, video or data"},
		{map[string]any{"request": "watch", "id": 77, "pin": "p1", "media": []any{1}}, 454, "must only contain strings"},
	}
	for _, tc := range cases {
		wantError(t, h, tc.body, tc.code, tc.reason)
	}
	// A viewer: watching twice, switching to nothing, configuring with a wrong type.
	v := attach(t, c)
	if _, offer := request(t, v, map[string]any{"request": "watch", "id": 77, "pin": "p1"}, nil); offer == nil {
		t.Fatal("watch without an offer")
	}
	wantError(t, v, map[string]any{"request": "watch", "id": 77, "pin": "p1"}, 460, "Already watching mountpoint 77")
	wantError(t, v, map[string]any{"request": "switch", "id": 9}, 455, "No such mountpoint/stream 9")
	wantError(t, v, map[string]any{"request": "configure", "send": "yes"}, 454, "send should be a boolean")
}

// TestRequests: the synchronous requests' replies in Janus's shapes, and what they do to viewers.
func TestRequests(t *testing.T) {
	c := startServer(t, func(c *config.Config) { c.Plugins.Streaming.AdminKey = "adm" })
	h := attach(t, c)
	data, _ := request(t, h, map[string]any{"request": "create", "admin_key": "adm", "type": "rtp", "id": 5, "name": "five",
		"description": "Five", "secret": "s", "is_private": true, "audio": true, "audioport": 0, "audiopt": 111,
		"audiocodec": "opus", "video": true, "videoport": 0, "videopt": 100, "videocodec": "vp8", "videortcpport": 0}, nil)
	st := data["stream"].(map[string]any)
	if data["created"] != "five" || data["permanent"] != false || st["type"] != "live" || st["host"] != "127.0.0.1" || st["audio_host"] != "127.0.0.1" || st["audio_port"] == nil ||
		st["video_port"] == nil || st["video_rtcp_port"] == nil {
		t.Errorf("legacy create: %v", data)
	}
	list, _ := request(t, h, map[string]any{"request": "list"}, nil)
	if n := len(list["list"].([]any)); n != 0 {
		t.Errorf("list without admin_key shows %d private mountpoints", n)
	}
	list, _ = request(t, h, map[string]any{"request": "list", "admin_key": "adm"}, nil)
	entries := list["list"].([]any)
	if len(entries) != 1 || entries[0].(map[string]any)["description"] != "Five" || len(entries[0].(map[string]any)["media"].([]any)) != 2 {
		t.Errorf("list with admin_key: %v", list)
	}
	info, _ := request(t, h, map[string]any{"request": "info", "id": 5}, nil)
	if i := info["info"].(map[string]any); i["secret"] != nil || i["viewers"] != nil || i["name"] != nil {
		t.Errorf("info without the secret shows details: %v", i)
	}
	info, _ = request(t, h, map[string]any{"request": "info", "id": 5, "secret": "s"}, nil)
	i := info["info"].(map[string]any)
	media := i["media"].([]any)
	if i["name"] != "five" || i["secret"] != "s" || i["viewers"] != float64(0) || len(media) != 2 ||
		media[1].(map[string]any)["codec"] != "vp8" || media[1].(map[string]any)["rtcpport"] == nil || media[0].(map[string]any)["mid"] != "a" {
		t.Errorf("info with the secret: %v", i)
	}
	edited, _ := request(t, h, map[string]any{"request": "edit", "id": 5, "secret": "s", "new_description": "Cinq", "new_is_private": false}, nil)
	if edited["streaming"] != "edited" || edited["id"] != float64(5) {
		t.Errorf("edit: %v", edited)
	}
	list, _ = request(t, h, map[string]any{"request": "list"}, nil)
	if e := list["list"].([]any); len(e) != 1 || e[0].(map[string]any)["description"] != "Cinq" {
		t.Errorf("after edit: %v", list)
	}

	// Recording: a .mjr of the video stream, in recordings_dir, named as asked.
	rec, _ := request(t, h, map[string]any{"request": "recording", "action": "start", "id": 5, "secret": "s", "video": "clip"}, nil)
	if rec["streaming"] != "ok" {
		t.Errorf("recording start: %v", rec)
	}
	wantError(t, h, map[string]any{"request": "recording", "action": "start", "id": 5, "secret": "s", "video": "again"}, 452, "already started")
	info, _ = request(t, h, map[string]any{"request": "info", "id": 5, "secret": "s"}, nil)
	file, _ := info["info"].(map[string]any)["media"].([]any)[1].(map[string]any)["recording"].(string)
	if filepath.Base(file) != "clip.mjr" {
		t.Errorf("recording file %q, want clip.mjr", file)
	}
	request(t, h, map[string]any{"request": "recording", "action": "stop", "id": 5, "secret": "s", "video": true}, nil)
	if head, err := os.ReadFile(file); err != nil || !strings.HasPrefix(string(head), "MJR00002") {
		t.Errorf("recording %s: %v", file, err)
	}

	// kick and kick_all hang viewers up with Janus's status.
	v1, v2 := watch(t, c, 5, nil), watch(t, c, 5, nil)
	info, _ = request(t, h, map[string]any{"request": "info", "id": 5, "secret": "s"}, nil)
	if n := info["info"].(map[string]any)["viewers"]; n != float64(2) {
		t.Errorf("%v viewers, want 2", n)
	}
	kicked, _ := request(t, h, map[string]any{"request": "kick", "id": 5, "secret": "s", "viewer": v1.h.ID}, nil)
	if kicked["streaming"] != "kicked" {
		t.Errorf("kick: %v", kicked)
	}
	v1.waitEvent(5*time.Second, func(e map[string]any) bool { return status(e) == "kicked" })
	all, _ := request(t, h, map[string]any{"request": "kick_all", "id": 5, "secret": "s"}, nil)
	if all["streaming"] != "kicked_all" {
		t.Errorf("kick_all: %v", all)
	}
	v2.waitEvent(5*time.Second, func(e map[string]any) bool { return status(e) == "kicked_all" })

	// destroy tells a viewer "stopped".
	v3 := watch(t, c, 5, nil)
	destroyed, _ := request(t, h, map[string]any{"request": "destroy", "id": 5, "secret": "s"}, nil)
	if destroyed["streaming"] != "destroyed" || destroyed["destroyed"] != float64(5) {
		t.Errorf("destroy: %v", destroyed)
	}
	v3.waitEvent(5*time.Second, func(e map[string]any) bool { return status(e) == "stopped" })
	wantError(t, h, map[string]any{"request": "info", "id": 5}, 455, "No such mountpoint/stream 5")
}

func status(e map[string]any) any {
	r, _ := e["result"].(map[string]any)
	return r["status"]
}

// TestConfigMountpoints: mountpoints of the configuration exist at start, with the secret strata
// generated for an empty one (in the log), and take RTP on their configured ports; one whose
// port is taken is left out and the server serves anyway.
func TestConfigMountpoints(t *testing.T) {
	ports := freePorts(t, 2)
	busy := holdPort(t)
	c := janustest.StartServer(t, func(cfg *config.Config) {
		cfg.Plugins.Streaming.Mountpoints = []config.StreamingMountpoint{
			{Type: "rtp", ID: 1, Description: "sample", Audio: true, AudioPort: &ports[0], AudioPT: ptr(111), AudioCodec: "opus",
				Video: true, VideoPort: &ports[1], VideoPT: ptr(100), VideoCodec: "vp8"},
			{Type: "rtp", ID: 2, Description: "taken", Media: []config.StreamingMedia{{Type: "audio", MID: "a", Port: &busy, Codec: "opus"}}},
		}
	}, janustest.Logger())
	h := attach(t, c)
	list, _ := request(t, h, map[string]any{"request": "list"}, nil)
	entries := list["list"].([]any)
	if len(entries) != 1 || entries[0].(map[string]any)["id"] != float64(1) {
		t.Fatalf("list: %v", list)
	}
	wantError(t, h, map[string]any{"request": "destroy", "id": 1, "secret": ""}, 457, "wrong secret")
	v := watch(t, c, 1, nil)
	args := append(testsrc("160x90"), videoArgs("vp8", "100k")...)
	args = append(args, rtpOut(ports[1], 100)...)
	args = append(args, audioArgs()...)
	args = append(args, rtpOut(ports[0], 111)...)
	ffmpeg(t, args...)
	v.waitPackets("a", 25, 10*time.Second)
	v.waitPackets("v", 25, 10*time.Second)
}

func ptr(n int) *int { return &n }

// TestAdminMessage: the admin API's message_plugin takes the synchronous requests; a missing body
// and one that is not an object get Janus's 450 and 451 (which the Janus API's gateway answers
// itself, before the plugin); the viewer requests are not admin requests.
func TestAdminMessage(t *testing.T) {
	p := streaming.New(config.Streaming{}, config.Default().Plugins.VideoRoom.Allocation, record.SessionOptions{}, nil, nil)
	defer p.Destroy()
	for body, want := range map[string]int{"": 450, `"x"`: 451, `{"request":"watch","id":1}`: 452, `{"request":"info","id":1}`: 455} {
		got, _ := p.AdminMessage(context.Background(), []byte(body)).(map[string]any)
		if got["error_code"] != want {
			t.Errorf("%s: %v, want error %v", body, got, want)
		}
	}
	got, _ := p.AdminMessage(context.Background(), []byte(`{"request":"list"}`)).(map[string]any)
	if got["streaming"] != "list" {
		t.Errorf("list: %v", got)
	}
}
