package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	strataconfig "github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/load/report"
	"github.com/strata-rtc/strata/internal/rig"
)

// TestStrataConfigLoads checks the generated configuration, with a merged change, is one strata
// accepts and means what the benchmark intends.
func TestStrataConfigLoads(t *testing.T) {
	dir := t.TempDir()
	path, err := rig.WriteStrataConfig(dir, "10.0.0.2", "veth9", 8088, "media: {nack: false}\nplugins: {videoroom: {allocation: {respond_nack: true}}}")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := strataconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Transports.HTTP.Listen != "10.0.0.2:8088" || cfg.Transports.WebSocket.Enabled || cfg.Transports.Admin.Enabled ||
		cfg.Plugins.EchoTest.Enabled || !cfg.Plugins.VideoRoom.Enabled || len(cfg.Plugins.VideoRoom.Rooms) != 0 ||
		len(cfg.Media.ICE.Interfaces) != 1 || cfg.Media.ICE.Interfaces[0] != "veth9" {
		t.Errorf("generated configuration: %+v", cfg)
	}
	if cfg.Media.NACK || !cfg.Plugins.VideoRoom.Allocation.RespondNACK {
		t.Error("--strata-yaml was not merged")
	}
	if _, err := rig.WriteStrataConfig(dir, "10.0.0.2", "veth9", 8088, "media: ["); err == nil {
		t.Error("malformed --strata-yaml accepted")
	}
}

func TestJanusConfigDisablesWhatIsUnused(t *testing.T) {
	lib := t.TempDir()
	for _, f := range []string{"plugins/libjanus_videoroom.so", "plugins/libjanus_echotest.so", "plugins/libjanus_streaming.so",
		"transports/libjanus_http.so", "transports/libjanus_nanomsg.so", "transports/libjanus_websockets.so"} {
		_ = os.MkdirAll(filepath.Join(lib, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(lib, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	argv, err := rig.JanusTarget("/usr/bin/janus", lib).Write(dir, "10.0.0.2", "veth9", 8088)
	if err != nil {
		t.Fatal(err)
	}
	if argv[0] != "/usr/bin/janus" || argv[len(argv)-1] != "-o" {
		t.Errorf("command %v", argv)
	}
	main, _ := os.ReadFile(filepath.Join(dir, "janus.jcfg"))
	http, _ := os.ReadFile(filepath.Join(dir, "janus.transport.http.jcfg"))
	for _, want := range []string{`disable = "libjanus_echotest.so,libjanus_streaming.so"`, `disable = "libjanus_nanomsg.so,libjanus_websockets.so"`,
		`ice_enforce_list = "veth9"`, `configs_folder = "` + dir + `"`} {
		if !strings.Contains(string(main), want) {
			t.Errorf("janus.jcfg lacks %q", want)
		}
	}
	if !strings.Contains(string(http), `ip = "10.0.0.2"`) || !strings.Contains(string(http), "port = 8088") {
		t.Errorf("http transport config:\n%s", http)
	}
}

func TestCleanAndRatio(t *testing.T) {
	good := &report.Result{Totals: report.Totals{CompleteShare: 1}}
	lossy := &report.Result{Totals: report.Totals{CompleteShare: 1, MeanLossRatio: 0.01}}
	late := &report.Result{Totals: report.Totals{CompleteShare: 1}, Generator: report.Generator{LateSkips: 1}}
	if !clean(good) || clean(lossy) || clean(late) {
		t.Error("clean() misjudges runs")
	}
	if ratio(1, 2) != "0.50" || ratio(0, 0) != "= (both 0)" || ratio(1, 0) != "–" {
		t.Errorf("ratios %q %q %q", ratio(1, 2), ratio(0, 0), ratio(1, 0))
	}
}

// TestStreamingScenario checks the streaming fan-out's sweep and that Janus runs it with the
// streaming plugin alone, without mountpoints (the run creates its own).
func TestStreamingScenario(t *testing.T) {
	sc := streamingFanOut(scales["small"], "http://10.0.0.2:8088/janus")
	var ns []int
	for _, p := range sc.plans {
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		ns = append(ns, p.Receivers())
	}
	if !sc.sweep || !isSweep(sc.name) || fmt.Sprint(ns) != "[1 2 4 8 16 32 64]" {
		t.Errorf("sweep %v over %v", sc.sweep, ns)
	}
	lib := t.TempDir()
	for _, f := range []string{"plugins/libjanus_videoroom.so", "plugins/libjanus_streaming.so", "transports/libjanus_http.so"} {
		_ = os.MkdirAll(filepath.Join(lib, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(lib, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := config{Binaries: rig.Binaries{Janus: "/usr/bin/janus", JanusLib: lib}}
	dir := t.TempDir()
	if _, err := target(c, "janus", sc.plans[0], sc.strataYAML).Write(dir, "10.0.0.2", "veth9", 8088); err != nil {
		t.Fatal(err)
	}
	main, _ := os.ReadFile(filepath.Join(dir, "janus.jcfg"))
	if !strings.Contains(string(main), `disable = "libjanus_videoroom.so"`) {
		t.Errorf("janus.jcfg does not run the streaming plugin alone:\n%s", main)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "janus.plugin.streaming.jcfg")); err != nil || strings.Contains(string(b), "port") {
		t.Errorf("streaming configuration: %v\n%s", err, b)
	}
	path, err := rig.WriteStrataConfig(t.TempDir(), "10.0.0.2", "veth9", 8088, benchStrataYAML, sc.strataYAML)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := strataconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Plugins.Streaming.Enabled || len(cfg.Plugins.Streaming.Mountpoints) != 0 {
		t.Errorf("strata's streaming plugin: %+v", cfg.Plugins.Streaming)
	}
}
