package recordplay_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/syncbuf"

	"github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/janusclient"
	"github.com/strata-rtc/strata/internal/janusclient/janustest"
	"github.com/strata-rtc/strata/internal/plugins/recordplay"
)

// Debian's Janus 1.1.2 and strata share one recordings directory: Janus lists and plays a
// recording strata made, and strata lists and plays (decoding its video) one Janus made.
func TestRecordingsShareWithJanus(t *testing.T) {
	dir := t.TempDir()
	c, h := startServer(t, dir)
	recordMedia(t, nil, h, 77, "made by strata", 3*time.Second)

	iface, api := hostAPI(t)
	jc := startJanus(t, dir, iface)
	jh := janustest.Attach(t, jc, recordplay.Package)
	list, _ := listed(t, jh)
	if e := list[77]; e == nil || e["name"] != "made by strata" || e["audio_codec"] != "opus" || e["video_codec"] != "vp8" {
		t.Fatalf("Janus lists %v", list)
	}
	v := newViewer(t, api)
	play(t, jh, v, 77)
	waitFor(t, "media from Janus", func() bool { return v.audio.Load() > 25 && v.vids.Load() > 10 })

	// Janus records (its .nfo, its MJR00002 files); strata finds it on update and plays it.
	recordMedia(t, api, janustest.Attach(t, jc, recordplay.Package), 88, "made by Janus", 3*time.Second)
	// Janus says "done" before it writes the .nfo (janus_recordplay_hangup_media_internal): update
	// until it is there.
	waitFor(t, "Janus's recording listed by strata", func() bool {
		janustest.MustRequest(t, h, map[string]any{"request": "update"}, nil)
		list, _ := listed(t, h)
		return list[88] != nil && list[88]["video_codec"] == "vp8" && list[88]["audio_codec"] == "opus"
	})
	v = newViewer(t, nil)
	play(t, janustest.Attach(t, c, recordplay.Package), v, 88)
	waitFor(t, "the end of the playout", func() bool { return v.audio.Load() > 120 && v.vids.Load() > 60 })
	time.Sleep(time.Second)
	v.closeIVF()
	if n := decodedFrames(t, v.ivf); n < 60 {
		t.Errorf("decoded %d frames of Janus's 3 s recording", n)
	}
}

// startJanus runs Debian's Janus with the Record&Play plugin over dir and the HTTP transport, ICE
// on iface (libnice gathers no loopback candidates), and returns a client of its API. The test stops it by its PID.
func startJanus(t *testing.T, dir, iface string) *janusclient.Client {
	t.Helper()
	const bin, lib = "/usr/bin/janus", "/usr/lib/x86_64-linux-gnu/janus"
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("Debian's janus package: %v", err)
	}
	conf := t.TempDir()
	port := freePort(t)
	files := map[string]string{
		"janus.jcfg": fmt.Sprintf(`general: { configs_folder = "%[1]s" plugins_folder = "%[2]s/plugins"
transports_folder = "%[2]s/transports" events_folder = "%[2]s/events" loggers_folder = "%[2]s/loggers" debug_level = 4 }
nat: { ice_enforce_list = "%[5]s" ignore_mdns = true }
plugins: { disable = "%[3]s" }
transports: { disable = "%[4]s" }
events: { broadcast = false }
`, conf, lib, others(lib+"/plugins", "libjanus_recordplay.so"), others(lib+"/transports", "libjanus_http.so"), iface),
		"janus.plugin.recordplay.jcfg": fmt.Sprintf("general: { path = %q }\n", dir),
		"janus.transport.http.jcfg": fmt.Sprintf("general: { base_path = \"/janus\" http = true port = %d ip = \"127.0.0.1\" https = false }\n"+
			"admin: { admin_http = false }\n", port),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(conf, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var logs syncbuf.Buffer
	cmd := exec.Command(bin, "-C", filepath.Join(conf, "janus.jcfg"), "-F", conf, "-o")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("Janus's log:\n%s", logs.String())
		}
	})
	api := fmt.Sprintf("http://127.0.0.1:%d/janus", port)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if res, err := http.Get(api + "/info"); err == nil {
			res.Body.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("Janus exited:\n%s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("Janus did not start:\n%s", logs.String())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := janusclient.Dial(ctx, api)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// hostAPI is a Pion API whose peers gather on the host's first IPv4 interface other than loopback,
// and that interface's name.
func hostAPI(t *testing.T) (string, *webrtc.API) {
	t.Helper()
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil {
				var se webrtc.SettingEngine
				name := i.Name
				se.SetInterfaceFilter(func(n string) bool { return n == name })
				se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
				se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
				return name, webrtc.NewAPI(webrtc.WithSettingEngine(se))
			}
		}
	}
	t.Fatal("no IPv4 interface besides loopback for Janus's ICE")
	return "", nil
}

// others lists the Janus modules in dir other than keep, for its disable lists.
func others(dir, keep string) string {
	libs, _ := filepath.Glob(filepath.Join(dir, "libjanus_*.so"))
	var out []byte
	for _, l := range libs {
		if b := filepath.Base(l); b != keep {
			if len(out) > 0 {
				out = append(out, ',')
			}
			out = append(out, b...)
		}
	}
	return string(out)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
