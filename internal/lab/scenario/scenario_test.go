package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

const good = `
name: demo
duration: 30s
seed: 7
links:
  - name: access
    from: s
    to: r1
    rate: 100Mbps
    delay: 5ms
    duplex: true
  - name: bottleneck
    from: r1
    to: r2
    rate: 2Mbps
    schedule:
      - {at: 10s, rate: 1Mbps}
      - {at: 20s, rate: 1.5Mbit/s}
    delay: 20ms
    queue: 100pkt
    loss: {model: gilbert-elliott, p: 1%, r: 30%}
    duplex: true
    reverse: {rate: 10Mbps, queue: 60KB}
  - name: egress
    from: r2
    to: d
    rate: 100Mbps
    delay: 1ms
    duplex: true
flows:
  - name: video
    cc: gcc
    params: {initial_rate: 500kbps, beta: 0.9}
    path: [s, r1, r2, d]
    codec: {model: statistical, fps: 25}
    feedback_interval: 50ms
  - name: probe
    kind: cbr
    rate: 100kbps
    path: [s, r1, r2, d]
    start: 5s
    stop: 25s
    count: 2
    start_step: 1s
`

func TestParseGoodFile(t *testing.T) {
	f, err := Parse("demo.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Runs[0]
	if s.Name != "demo" || s.Duration != 30*time.Second || s.Seed != 7 {
		t.Fatalf("header %+v", s)
	}
	if len(s.Links) != 6 {
		t.Fatalf("%d links, want 6 (three duplex)", len(s.Links))
	}
	b := s.Links[2]
	if b.Name != "bottleneck" || len(b.Rate) != 3 || b.Rate[1].Bps != 1e6 || b.Rate[2].Bps != 1.5e6 {
		t.Fatalf("bottleneck %+v", b.LinkConfig)
	}
	if b.Queue != (sim.Limit{Unit: sim.LimitPackets, Value: 100}) || b.Loss.Model != "gilbert-elliott" || b.Loss.R != 0.3 {
		t.Fatalf("bottleneck queue/loss %+v %+v", b.Queue, b.Loss)
	}
	rev := s.Links[3]
	if rev.Name != "bottleneck-rev" || rev.From != "r2" || len(rev.Rate) != 1 || rev.Rate[0].Bps != 10e6 ||
		rev.Queue.Unit != sim.LimitBytes || rev.Loss.Model != "" {
		t.Fatalf("reverse %+v", rev.LinkConfig)
	}
	if s.Links[0].Queue != (sim.Limit{Unit: sim.LimitTime, Value: 0.3}) {
		t.Fatalf("default queue %+v", s.Links[0].Queue)
	}
	v := s.Flows[0]
	if v.Kind != KindMedia || v.Params["initial_rate"].F != 500e3 || v.Params["beta"].F != 0.9 ||
		v.Codec.Model != "statistical" || v.Codec.FPS != 25 || v.Feedback != 50*time.Millisecond {
		t.Fatalf("video %+v", v)
	}
	if strings.Join(v.ReversePath, ",") != "d,r2,r1,s" || v.Stop != 30*time.Second {
		t.Fatalf("reverse path %v stop %v", v.ReversePath, v.Stop)
	}
	if len(s.Flows) != 3 || s.Flows[2].Name != "probe-2" || s.Flows[2].Start != 6*time.Second {
		t.Fatalf("count expansion: %+v", s.Flows[1:])
	}
	if _, err := s.Build(1); err != nil {
		t.Fatal(err)
	}
}

func TestBadInputNamesFileLineAndField(t *testing.T) {
	base := strings.Split(good, "\n")
	edit := func(line int, text string) string {
		lines := append([]string(nil), base...)
		lines[line-1] = text
		return strings.Join(lines, "\n")
	}
	cases := []struct {
		name, doc, want string
	}{
		{"unknown field", edit(13, "    colour: blue"), `demo.yaml:13: links[bottleneck].colour: unknown field "colour"`},
		{"missing unit", edit(15, "    rate: 10"), `demo.yaml:15: links[bottleneck].rate: missing unit in "10"`},
		{"negative rate", edit(15, "    rate: -2Mbps"), `demo.yaml:15: links[bottleneck].rate: negative rate`},
		{"missing duration unit", edit(19, "    delay: 20"), `demo.yaml:19: links[bottleneck].delay: missing unit in "20"`},
		{"queue unit", edit(20, "    queue: 100"), `demo.yaml:20: links[bottleneck].queue: missing unit in "100"`},
		{"bad loss", edit(21, "    loss: 150%"), `demo.yaml:21: links[bottleneck].loss:`},
		{"no such node", edit(34, "    path: [s, r1, x, d]"), `demo.yaml:31: flows[video].path: no node "x"`},
		{"link missing", edit(34, "    path: [s, r2, d]"), `demo.yaml:31: flows[video].path: no link from s to r2`},
		{"unknown cc", edit(32, "    cc: bbr"), `demo.yaml:32: flows[video].cc: unknown controller "bbr"`},
		{"unknown param", edit(33, "    params: {warp: 9}"), `demo.yaml:33: flows[video].params.warp: unknown field "warp"`},
		{"param unit", edit(33, "    params: {initial_rate: 500}"), `demo.yaml:33: flows[video].params.initial_rate: missing unit`},
		{"kind field", edit(36, "    mss: 1000B"), `demo.yaml:36: flows[video].mss: only tcp and ledbat flows take mss`},
		{"stop too late", edit(42, "    stop: 99s"), `demo.yaml:37: flows[probe].stop: stop 1m39s is after the end of the run`},
		{"no duration", edit(3, "description: x"), `demo.yaml:2: duration: a positive duration is required`},
		{"negative duration", edit(3, "duration: -5s"), `demo.yaml:3: duration: negative duration`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("demo.yaml", []byte(c.doc))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q\nwant it to contain %q", err, c.want)
			}
		})
	}
}

func TestReversePathMustExist(t *testing.T) {
	doc := `
duration: 10s
links:
  - {name: a, from: x, to: y, rate: 1Mbps}
flows:
  - {name: m, cc: gcc, path: [x, y]}
`
	_, err := Parse("r.yaml", []byte(doc))
	if err == nil || !strings.Contains(err.Error(), "r.yaml:6: flows[m].path: no link back from y to x") {
		t.Fatalf("error %v", err)
	}
}

func TestSweepExpands(t *testing.T) {
	doc := good + `
sweep:
  param: links.bottleneck.queue
  values: [10pkt, 50pkt, 200ms]
  metric: jain_index
`
	f, err := Parse("demo.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 3 || f.Sweep.Metric != "jain_index" {
		t.Fatalf("%d runs", len(f.Runs))
	}
	if q := f.Runs[1].Links[2].Queue; q != (sim.Limit{Unit: sim.LimitPackets, Value: 50}) {
		t.Fatalf("run 1 queue %+v", q)
	}
	if q := f.Runs[2].Links[2].Queue; q != (sim.Limit{Unit: sim.LimitTime, Value: 0.2}) {
		t.Fatalf("run 2 queue %+v", q)
	}
	if f.Runs[2].SweepValue != "200ms" {
		t.Fatalf("label %q", f.Runs[2].SweepValue)
	}
	// A parameter that the file does not set is created.
	doc2 := good + `
sweep:
  param: flows[video].params.max_rate
  values: [1Mbps, 2Mbps]
`
	f, err = Parse("demo.yaml", []byte(doc2))
	if err != nil {
		t.Fatal(err)
	}
	if f.Runs[1].Flows[0].Params["max_rate"].F != 2e6 {
		t.Fatalf("params %+v", f.Runs[1].Flows[0].Params)
	}
}

func TestSweepErrors(t *testing.T) {
	for _, c := range []struct{ sweep, want string }{
		{"sweep: {param: links.nothere.queue, values: [1pkt]}", "no list item named \"nothere\""},
		{"sweep: {param: links.bottleneck.queue, values: [12]}", "demo.yaml:46: links[bottleneck].queue: missing unit"},
		{"sweep: {param: duration.x, values: [1s]}", "single value"},
		{"sweep: {values: [1s]}", "sweep.param"},
	} {
		_, err := Parse("demo.yaml", []byte(good+"\n"+c.sweep+"\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.sweep, err, c.want)
		}
	}
}

const browserDoc = `
duration: 20s
links:
  - {name: cap, from: a, to: b, rate: 1Mbps, delay: 25ms, queue: 50pkt, duplex: true}
flows:
  - name: chrome
    kind: browser
    path: [a, b]
`

func TestBrowserFlow(t *testing.T) {
	f, err := Parse("b.yaml", []byte(browserDoc))
	if err != nil {
		t.Fatal(err)
	}
	fl := f.Runs[0].Flows[0]
	if fl.Kind != KindBrowser || fl.Receiver != ReceiverBrowser || fl.Video != DefaultBrowserVideo() || fl.CC != "" {
		t.Fatalf("defaults %+v", fl)
	}
	doc := browserDoc + "    receiver: echotest\n    video: {width: 640, height: 360, fps: 15, content: noise, max_rate: 1.2Mbps}\n"
	if f, err = Parse("b.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	fl = f.Runs[0].Flows[0]
	if fl.Receiver != ReceiverEchotest || fl.Video != (BrowserVideo{Width: 640, Height: 360, FPS: 15, Content: ContentNoise, MaxRate: 1.2e6}) {
		t.Fatalf("fields %+v", fl)
	}
	// The simulator has no browser: it says where browser flows run.
	_, err = f.Runs[0].Build(1)
	if !errors.Is(err, ErrBrowserNeedsEmulation) || !strings.Contains(err.Error(), "flow chrome: browser flows run only in emulation: strata lab run --engine emu") {
		t.Fatalf("Build: %v", err)
	}
	// A y4m file is found beside the scenario file.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "clip.y4m"), []byte("YUV4MPEG2 "), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err = Parse(filepath.Join(dir, "s.yaml"), []byte(browserDoc+"    video: {file: clip.y4m}\n")); err != nil {
		t.Fatal(err)
	}
	if got := f.Runs[0].Flows[0].Video.File; got != filepath.Join(dir, "clip.y4m") {
		t.Fatalf("file %q", got)
	}
}

func TestBrowserFlowErrors(t *testing.T) {
	for _, c := range []struct{ add, want string }{
		{"    receiver: janus", `b.yaml:9: flows[chrome].receiver: unknown receiver "janus" (browser or echotest)`},
		{"    video: {fps: 0}", `b.yaml:9: flows[chrome].video.fps: fps must be between 1 and 60`},
		{"    video: {width: 10}", `b.yaml:9: flows[chrome].video.width: 10 is outside [16, 7680]`},
		{"    video: {max_rate: 2}", `b.yaml:9: flows[chrome].video.max_rate: missing unit`},
		{"    video: {file: clip.mp4}", `b.yaml:9: flows[chrome].video.file: "clip.mp4" is not a .y4m file`},
		{"    video: {file: /nonexistent/clip.y4m}", `b.yaml:9: flows[chrome].video.file: no such file /nonexistent/clip.y4m`},
		{"    video: {content: movie}", `b.yaml:9: flows[chrome].video.content: unknown content "movie" (camera or noise`},
		{"    video: {content: noise, file: /nonexistent/clip.y4m}", `flows[chrome].video: give content or file, not both`},
		{"    video: {colour: red}", `b.yaml:9: flows[chrome].video.colour: unknown field "colour"`},
		{"    cc: gcc", `b.yaml:9: flows[chrome].cc: only media and tcp and ledbat flows take cc`},
		{"    codec: {model: perfect}", `b.yaml:9: flows[chrome].codec: only media flows take codec`},
		{"    ecn: true", `b.yaml:9: flows[chrome].ecn: only media and tcp and ledbat and cbr flows take ecn`},
		{"    kind: chromium", `unknown kind "chromium" (media, tcp, ledbat, cbr or browser)`},
	} {
		doc := browserDoc + c.add + "\n"
		if strings.Contains(c.add, "kind:") {
			doc = strings.Replace(browserDoc, "    kind: browser", c.add, 1)
		}
		_, err := Parse("b.yaml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.add, err, c.want)
		}
	}
	// A media flow does not take a browser's fields.
	_, err := Parse("demo.yaml", []byte(strings.Replace(good, "    feedback_interval: 50ms", "    receiver: browser", 1)))
	if err == nil || !strings.Contains(err.Error(), "flows[video].receiver: only browser flows take receiver") {
		t.Errorf("receiver on a media flow: %v", err)
	}
}

// Codec model libvpx parses with its frame size and content, builds only in emulation, and is
// refused where it cannot run.
func TestLibvpxCodec(t *testing.T) {
	doc := `
duration: 10s
links:
  - {name: a, from: x, to: y, rate: 1Mbps, duplex: true}
flows:
  - {name: v, cc: gcc, path: [x, y], codec: {model: libvpx, width: 1280, height: 720, fps: 30, content: noise}}
`
	f, err := Parse("v.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Runs[0].Flows[0].Codec
	if c.Model != sim.ModelLibvpx || c.Width != 1280 || c.Height != 720 || c.FPS != 30 || c.Content != "noise" || !c.Adapts() {
		t.Fatalf("codec %+v", c)
	}
	// adapt: false keeps the size and the target; it belongs to model libvpx only.
	fixed, err := Parse("v.yaml", []byte(strings.Replace(doc, "content: noise", "content: noise, adapt: false", 1)))
	if err != nil || fixed.Runs[0].Flows[0].Codec.Adapts() {
		t.Fatalf("adapt: false: %v", err)
	}
	if _, err := Parse("v.yaml", []byte(strings.Replace(doc, "content: noise", "content: noise, adapt: maybe", 1))); err == nil {
		t.Fatal("adapt: maybe parsed")
	}
	if _, err := f.Runs[0].Build(1); !errors.Is(err, sim.ErrLibvpxNeedsEmulation) ||
		!strings.Contains(err.Error(), "codec model libvpx needs the emulation engine (strata lab run --engine emu)") {
		t.Fatalf("the simulator built model libvpx: %v", err)
	}
	for _, c := range []struct{ edit, want string }{
		{"width: 1280, height: 720", "even width and height"},
		{"content: noise", "unknown content"},
		{"model: libvpx", "belong to codec model libvpx"},
		{"fps: 30", "belong to codec model libvpx"},
	} {
		bad := strings.Replace(doc, c.edit, map[string]string{
			"width: 1280, height: 720": "width: 1281, height: 720",
			"content: noise":           "content: camera",
			"model: libvpx":            "model: statistical",
			"fps: 30":                  "fps: 30, adapt: true",
		}[c.edit], 1)
		if c.edit == "fps: 30" {
			bad = strings.Replace(bad, "libvpx, width: 1280, height: 720", "statistical", 1)
			bad = strings.Replace(bad, ", content: noise", "", 1)
		}
		if _, err := Parse("v.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.edit, err, c.want)
		}
	}
	sfu := `
duration: 10s
links:
  - {name: up, from: p, to: s, rate: 5Mbps, duplex: true}
  - {name: down, from: s, to: r, rate: 5Mbps, duplex: true}
sfu:
  node: s
  sessions:
    - {name: s1, layers: [1Mbps], path: [p, s, r], codec: {model: libvpx, width: 640, height: 360}}
`
	if _, err := Parse("s.yaml", []byte(sfu)); err == nil || !strings.Contains(err.Error(), "not SFU sessions") {
		t.Errorf("an SFU session took model libvpx: %v", err)
	}
}

// A ledbat flow's endpoint defaults to Pion, takes browser, and is refused elsewhere; cc sctp is
// a ledbat-kind controller (the simulator's NewReno model).
func TestLEDBATEndpoint(t *testing.T) {
	doc := `
duration: 10s
links:
  - {name: a, from: x, to: y, rate: 1Mbps, duplex: true}
flows:
  - {name: lp, cc: ledbat, path: [x, y]}
  - {name: dc, cc: sctp, endpoint: browser, path: [x, y]}
`
	f, err := Parse("l.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	lp, dc := f.Runs[0].Flows[0], f.Runs[0].Flows[1]
	if lp.Endpoint != EndpointPion || dc.Endpoint != EndpointBrowser || dc.Kind != KindLEDBAT {
		t.Fatalf("lp %q, dc %q (kind %s)", lp.Endpoint, dc.Endpoint, dc.Kind)
	}
	if _, err := f.Runs[0].Build(1); err != nil {
		t.Fatalf("the simulator runs both: %v", err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"endpoint: browser", "endpoint: firefox", `l.yaml:7: flows[dc].endpoint: unknown endpoint "firefox" (pion or browser)`},
		{"{name: lp, cc: ledbat,", "{name: lp, cc: cubic, endpoint: pion,", `flows[lp].endpoint: only ledbat flows take endpoint`},
	} {
		if _, err := Parse("l.yaml", []byte(strings.Replace(doc, c.from, c.to, 1))); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.to, err, c.want)
		}
	}
}
