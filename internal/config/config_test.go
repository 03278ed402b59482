package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/strata-rtc/strata/configs"
	"github.com/strata-rtc/strata/internal/sfu"
)

func TestDefaultsNeedNoFile(t *testing.T) {
	c := Default()
	if c.General.SessionTimeout != 60*time.Second {
		t.Errorf("session_timeout = %v, want Janus's 60s", c.General.SessionTimeout)
	}
	if c.Transports.HTTP.Listen != ":8088" || c.Transports.WebSocket.Listen != ":8188" || c.Transports.Admin.Listen != "127.0.0.1:7088" {
		t.Errorf("listeners = %q %q %q, want Janus's default ports (admin on loopback)", c.Transports.HTTP.Listen, c.Transports.WebSocket.Listen, c.Transports.Admin.Listen)
	}
	if c.Transports.HTTP.LongPollTimeout != 30*time.Second {
		t.Errorf("long_poll_timeout = %v, want 30s", c.Transports.HTTP.LongPollTimeout)
	}
	if !c.Plugins.EchoTest.Enabled {
		t.Error("echotest should be enabled by default")
	}
}

// TestReferenceDocumentsEveryOption walks the Config struct and checks that each yaml key appears in
// the reference file, so an option cannot be added without being documented there.
func TestReferenceDocumentsEveryOption(t *testing.T) {
	var root yaml.Node
	if err := yaml.Unmarshal(configs.Reference, &root); err != nil {
		t.Fatal(err)
	}
	var walk func(typ reflect.Type, node *yaml.Node, path string)
	walk = func(typ reflect.Type, node *yaml.Node, path string) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			tag := f.Tag.Get("yaml")
			if strings.HasSuffix(tag, ",inline") {
				walk(f.Type, node, path)
				continue
			}
			key := strings.Split(tag, ",")[0]
			child := lookup(node, key)
			if child == nil {
				t.Errorf("option %s%s is not in configs/strata.yaml", path, key)
				continue
			}
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Duration(0)) {
				walk(f.Type, child, path+key+".")
			}
		}
	}
	walk(reflect.TypeOf(Config{}), root.Content[0], "")
}

func lookup(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// TestReferenceIsTheComponentsDefaults: the reference file decodes into the components' own
// configuration types, and what it says equals their Go defaults (DefaultAllocatorConfig, the
// policies' DefaultBWEConfig and DefaultProbeConfig), so the two cannot drift apart.
func TestReferenceIsTheComponentsDefaults(t *testing.T) {
	got := Default().Plugins.VideoRoom.Allocation.AllocatorConfig
	if want := sfu.DefaultAllocatorConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("configs/strata.yaml plugins.videoroom.allocation:\n%+v\nGo defaults:\n%+v", got, want)
	}
	if got, want := Default().Plugins.VideoRoom.DataChannels, sfu.DefaultDataSinkConfig(); got != want {
		t.Errorf("configs/strata.yaml plugins.videoroom.data_channels: %+v, Go defaults: %+v", got, want)
	}
	if got, want := Default().Plugins.Streaming.DataChannels, sfu.DefaultDataSinkConfig(); got != want {
		t.Errorf("configs/strata.yaml plugins.streaming.data_channels: %+v, Go defaults: %+v", got, want)
	}
	if got, want := Default().Plugins.VideoCall.DataChannels, sfu.DefaultDataSinkConfig(); got != want {
		t.Errorf("configs/strata.yaml plugins.videocall.data_channels: %+v, Go defaults: %+v", got, want)
	}
	marks := Default().Plugins.VideoRoom.NetCtl.Marks
	if marks.Audio != sfu.DefaultAudioDSCP || !slices.Equal(marks.MarkBytes(), sfu.DefaultLayerDSCP()) {
		t.Errorf("configs/strata.yaml plugins.videoroom.netctl.marks: %+v, Go defaults: audio %d, layers %v", marks, sfu.DefaultAudioDSCP, sfu.DefaultLayerDSCP())
	}
	if e := Default().Plugins.VideoRoom.NetCtl.Enforcement; e != EnforceSFU {
		t.Errorf("configs/strata.yaml plugins.videoroom.netctl.enforcement: %q, the videoroom's default (an empty value) is %q", e, EnforceSFU)
	}
}

func TestFileOverridesOnlyWhatItStates(t *testing.T) {
	c, err := Parse([]byte("general:\n  session_timeout: 5s\nmedia:\n  ice:\n    udp_mux_port: 20000\n"), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.General.SessionTimeout != 5*time.Second || c.Media.ICE.UDPMuxPort != 20000 {
		t.Errorf("overrides not applied: %+v %+v", c.General, c.Media.ICE)
	}
	if c.Transports.HTTP.Listen != ":8088" || !c.Media.TWCC {
		t.Errorf("defaults lost when overriding: %+v", c.Transports.HTTP)
	}
}

func TestBadFilesAreRejectedWithTheirName(t *testing.T) {
	cases := map[string]string{
		"unknown key":        "general:\n  sesion_timeout: 5s\n",
		"wrong type":         "general:\n  session_timeout: soon\n",
		"negative timeout":   "general:\n  session_timeout: -1s\n",
		"bad log level":      "general:\n  log_level: loud\n",
		"bad port range":     "media:\n  ice:\n    port_min: 30000\n    port_max: 20000\n",
		"bad estimator":      "media:\n  congestion_control:\n    estimator: bbr\n",
		"estimator w/o twcc": "media:\n  twcc: false\n",
		"min above max":      "media:\n  congestion_control:\n    min_bitrate: 20000000\n",
		"not yaml":           "general: [\n",
		"no event queue":     "transports:\n  http:\n    event_queue: 0\n",
		"no send queue":      "transports:\n  websocket:\n    send_queue: 0\n",
		"no send timeout":    "transports:\n  websocket:\n    send_timeout: 0s\n",
		"no textroom bound":  "plugins:\n  textroom:\n    max_message_size: 0\n",
		"lowprio variant":    "lowprio:\n  variant: cubic\n",
		"lowprio share":      "lowprio:\n  share: all\n",
		"lowprio target":     "lowprio:\n  target_delay: -1ms\n",
		"lowprio transfers":  "lowprio:\n  max_transfers: 0\n",
		"bad enforcement":    "plugins:\n  videoroom:\n    netctl:\n      enforcement: router\n",
		"mark out of range":  "plugins:\n  videoroom:\n    netctl:\n      marks:\n        layers: [34, 64]\n",
		"mark used twice":    "plugins:\n  videoroom:\n    netctl:\n      marks:\n        audio: 34\n",
		"switch without mux": "plugins:\n  videoroom:\n    netctl:\n      url: http://127.0.0.1:1\n      enforcement: switch\n",
		"gc percent":         "runtime:\n  gc_percent: -2\n",
		"no collection":      "runtime:\n  gc_percent: -1\n",
		"negative limit":     "runtime:\n  memory_limit: -1\n",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(text), "bad.yaml")
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), "bad.yaml") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("general:\n  session_timeout: 5s\n"))
	f.Add(configs.Reference)
	f.Add([]byte("{"))
	f.Add([]byte("transports:\n  timeouts: {read: 1s}\n  admin:\n    listen: \":7088\"\n    admin_secret: janusoverlord\n    https: {enabled: true, self_signed: true}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz.yaml")
		if err == nil && c.Validate() != nil {
			t.Fatal("Parse accepted a configuration Validate rejects")
		}
	})
}

func TestSwitchEnforcementWithTheUDPMux(t *testing.T) {
	c, err := Parse([]byte("media:\n  ice:\n    udp_mux_port: 20000\nplugins:\n  videoroom:\n    netctl:\n      url: http://127.0.0.1:1\n      enforcement: switch\n"), "ok.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Plugins.VideoRoom.NetCtl; n.Enforcement != EnforceSwitch || n.Marks.Audio != 46 || len(n.Marks.Layers) != 3 {
		t.Fatalf("netctl %+v", n)
	}
}
