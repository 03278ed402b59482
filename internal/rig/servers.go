package rig

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/strata-rtc/strata/internal/load/plan"
)

// Target is a server under test.
type Target struct {
	Name string
	// write generates its configuration into dir for a server on ip:port inside the namespace
	// interface nsIf, and returns the command line that runs it.
	Write func(dir, ip, nsIf string, port int) ([]string, error)
}

const APIPort = 8088

// StrataTarget runs the strata binary; extras are YAML merged, in order, over the generated
// configuration (a scenario's own settings, then --strata-yaml).
func StrataTarget(bin string, extras ...string) Target {
	return Target{Name: "strata", Write: func(dir, ip, nsIf string, port int) ([]string, error) {
		path, err := WriteStrataConfig(dir, ip, nsIf, port, extras...)
		if err != nil {
			return nil, err
		}
		return []string{bin, "serve", "-config", path}, nil
	}}
}

// WriteStrataConfig writes what differs from the embedded defaults: the HTTP transport alone, no
// demos, ICE on the namespace's interface, the videoroom without sample rooms, the streaming
// plugin without sample mountpoints, quiet logs. extras
// are YAML merged over it in order (a scenario's or probe's settings). An empty ip listens on
// every address.
func WriteStrataConfig(dir, ip, nsIf string, port int, extras ...string) (string, error) {
	cfg := fmt.Sprintf(`# generated for a server under test: HTTP transport only
general:
  log_level: warn
transports:
  http:
    listen: "%s:%d"
    demos: false
  websocket:
    enabled: false
  admin:
    enabled: false
media:
  ice:
    interfaces: [%s]
    # One shared UDP port: each fan-out leaves in one sendmmsg (batch_writes, on by default).
    udp_mux_port: 20000
plugins:
  echotest:
    enabled: false
  videoroom:
    enabled: true
    rooms: []
  streaming:
    # No sample mountpoints: a live file mountpoint plays (reads, packetises, meters) whether
    # anyone watches or not, a fixed cost that Janus's configuration (the videoroom alone) does
    # not carry and that weighs on the small fan-outs.
    mountpoints: []
`, ip, port, nsIf)
	for _, extra := range extras {
		if extra == "" {
			continue
		}
		merged, err := MergeYAML(cfg, extra)
		if err != nil {
			return "", fmt.Errorf("--strata-yaml: %w", err)
		}
		cfg = "# generated for a server under test, with scenario settings merged in\n" + merged
	}
	path := filepath.Join(dir, "strata.yaml")
	return path, os.WriteFile(path, []byte(cfg), 0o644)
}

// MergeYAML merges the mappings of over into base, recursively.
func MergeYAML(base, over string) (string, error) {
	var b, o map[string]any
	if err := yaml.Unmarshal([]byte(base), &b); err != nil {
		return "", err
	}
	if err := yaml.Unmarshal([]byte(over), &o); err != nil {
		return "", err
	}
	merge(b, o)
	out, err := yaml.Marshal(b)
	return string(out), err
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// JanusTarget runs Debian's Janus with a generated configuration: the videoroom plugin and HTTP
// transport only (a second Janus with the stock configuration can crash on the shared nanomsg
// socket; see test-tooling notes), no sample rooms, logs at warnings.
func JanusTarget(bin, libDir string) Target {
	return JanusPluginTarget(bin, libDir, "videoroom")
}

// JanusPluginTarget is JanusTarget with another plugin (libjanus_<plugin>.so) as the only one
// loaded. Everything else, media settings included, is Janus's default. An empty ip listens on
// every address.
func JanusPluginTarget(bin, libDir, plugin string) Target {
	return janusTarget(bin, libDir, plugin, false)
}

// WSPort is the Janus API WebSocket port of the targets that have one (Janus's and strata's
// default).
const WSPort = 8188

// JanusAPITarget is JanusPluginTarget with the WebSocket transport too, on WSPort.
func JanusAPITarget(bin, libDir, plugin string) Target {
	return janusTarget(bin, libDir, plugin, true)
}

func janusTarget(bin, libDir, plugin string, ws bool) Target {
	transports := []string{"libjanus_http.so"}
	if ws {
		transports = append(transports, "libjanus_websockets.so")
	}
	return Target{Name: "janus", Write: func(dir, ip, nsIf string, port int) ([]string, error) {
		disabled := func(sub string, keep ...string) string {
			libs, _ := filepath.Glob(filepath.Join(libDir, sub, "libjanus_*.so"))
			var names []string
			for _, l := range libs {
				if base := filepath.Base(l); !slices.Contains(keep, base) {
					names = append(names, base)
				}
			}
			return strings.Join(names, ",")
		}
		files := map[string]string{
			"janus.jcfg": fmt.Sprintf(`general: {
	configs_folder = "%[1]s"
	plugins_folder = "%[2]s/plugins"
	transports_folder = "%[2]s/transports"
	events_folder = "%[2]s/events"
	loggers_folder = "%[2]s/loggers"
	debug_level = 3
	admin_secret = "janusoverlord"
}
media: {
}
nat: {
	nice_debug = false
	ignore_mdns = true
	ice_enforce_list = "%[3]s"
}
plugins: {
	disable = "%[4]s"
}
transports: {
	disable = "%[5]s"
}
loggers: {
	disable = "libjanus_jsonlog.so"
}
events: {
	broadcast = false
}
`, dir, libDir, nsIf, disabled("plugins", "libjanus_"+plugin+".so"), disabled("transports", transports...)),
			"janus.plugin." + plugin + ".jcfg": janusPluginConfig(plugin, ip),
			"janus.transport.http.jcfg": fmt.Sprintf(`general: {
	json = "compact"
	base_path = "/janus"
	http = true
	port = %d
%s	https = false
}
admin: {
	admin_http = false
	admin_https = false
}
`, port, janusIPLine(ip)),
		}
		if ws {
			files["janus.transport.websockets.jcfg"] = fmt.Sprintf(`general: {
	json = "compact"
	ws = true
	ws_port = %d
%s	wss = false
}
admin: {
	admin_ws = false
	admin_wss = false
}
`, WSPort, strings.Replace(janusIPLine(ip), "ip =", "ws_ip =", 1))
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				return nil, err
			}
		}
		return []string{bin, "-C", filepath.Join(dir, "janus.jcfg"), "-F", dir, "-o"}, nil
	}}
}

// janusPluginConfig is the plugin's configuration: nothing but the general section (rooms are
// created through the API), except for the audio bridge, which gets the sample room 1234 at
// 16 kHz as Debian's file has it (without the published sample secret; joining needs none), and
// the SIP plugin (janusSIPConfig).
func janusPluginConfig(plugin, ip string) string {
	if plugin == "sip" {
		return janusSIPConfig(ip)
	}
	if plugin != "audiobridge" {
		return "general: {\n}\n"
	}
	return fmt.Sprintf(`general: {
}
room-%d: {
	description = "Demo Room"
	sampling_rate = 16000
	record = false
}
`, plan.AudioBridgeRoom)
}

// janusSIPConfig is Debian's janus.plugin.sip.jcfg with its SIP signalling and RTP bound to the
// namespace's address (the one the SIP side reaches), so Janus does not guess it.
func janusSIPConfig(ip string) string {
	local := ""
	if ip != "" {
		local = fmt.Sprintf("\tlocal_ip = %q\n\tlocal_media_ip = %q\n", ip, ip)
	}
	return "general: {\n" + local + `	keepalive_interval = 120
	behind_nat = false
	register_ttl = 3600
	rtp_port_range = "20000-40000"
	sip_timer_t1x64 = 32000
}
`
}

func janusIPLine(ip string) string {
	if ip == "" {
		return ""
	}
	return fmt.Sprintf("\tip = %q\n", ip)
}

// Start runs the target in the namespace and waits until its API answers.
func Start(t Target, ns *Netns, dir string) (*Process, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	argv, err := t.Write(dir, ns.ListenIP(), ns.ICEIf(), APIPort)
	if err != nil {
		return nil, err
	}
	// `ip netns exec` execs the server in place, so the PID we hold is the server's.
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns.Name}, argv...)...)
	p, err := StartCommand(t.Name, cmd, filepath.Join(dir, t.Name+".log"))
	if err != nil {
		return nil, err
	}
	url := fmt.Sprintf("http://%s:%d/janus/info", ns.ServerIP, APIPort)
	if err := p.WaitHTTP(context.Background(), http.DefaultClient, url); err != nil {
		_ = p.Stop(StopGrace)
		return nil, err
	}
	return p, nil
}
