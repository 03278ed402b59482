package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/lab/scenario"
)

func browserSpec(receiver string) scenario.Flow {
	return scenario.Flow{Name: "chrome", Kind: scenario.KindBrowser, Receiver: receiver,
		Video: scenario.DefaultBrowserVideo(), Stop: 20 * time.Second}
}

// netnsOf is the network namespace a process runs in, as the kernel names it ("net:[inode]").
func netnsOf(t *testing.T, path string) string {
	t.Helper()
	target, err := os.Readlink(path)
	if err != nil {
		t.Fatal(err)
	}
	return target
}

func nsInode(t *testing.T, name string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join("/var/run/netns", name), &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// startFlow builds a browser flow from src to dst sending generated video (a moving gradient
// under noise, 640×360 at 30 fps) to receiver, recorded by rec, and starts it; stopping it is the
// test's.
func startFlow(t *testing.T, receiver string, src, dst endpoint.Host, rec *emutest.Recorder, opts Options) *flow {
	t.Helper()
	spec := browserSpec(receiver)
	spec.Video = scenario.BrowserVideo{Width: 640, Height: 360, FPS: 30, Content: scenario.ContentNoise}
	fl, err := New(endpoint.Env{Spec: spec, Src: src, Dst: dst, Rec: rec, Clock: rec, Log: emutest.Log(t)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	if err := fl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return fl.(*flow)
}

// TestBrowserFlowOverOneMegabit sends generated video (a moving gradient under noise) as
// Chromium's camera (its own fake camera is so easy to encode that it stays below the link) to a second Chromium over a
// 1 Mbit/s emulated link (25 ms, 50 packets) and checks what libwebrtc's GCC made of it, as the lab records it: an
// estimate read from getStats, RTT samples, and payload delivered at a rate above a floor and
// below the link. Both browsers must run in their hosts' namespaces, never in the root one, and
// Stop must leave no process, profile or video file behind.
func TestBrowserFlowOverOneMegabit(t *testing.T) {
	network, src, dst := emulated(t, "1Mbps")
	netStart := time.Now()
	rec := emutest.NewRecorder()
	work := t.TempDir()
	f := startFlow(t, scenario.ReceiverBrowser, src, dst, rec, Options{WorkDir: work, Interval: 100 * time.Millisecond})
	up := rec.Now()
	stopped := false
	defer func() {
		if !stopped {
			_ = f.Stop()
		}
	}()
	t.Logf("media flowing %v after the test began", up.Round(time.Millisecond))

	for _, c := range []struct {
		b  *chromium
		ns string
	}{{f.sender, src.Name()}, {f.receiver, dst.Name()}} {
		if c.b.pid <= 0 {
			t.Fatalf("%s: no PID", c.b.who)
		}
		got, want := netnsOf(t, fmt.Sprintf("/proc/%d/ns/net", c.b.pid)), fmt.Sprintf("net:[%d]", nsInode(t, c.ns))
		if got != want {
			t.Fatalf("%s (pid %d) runs in %s, want %s's namespace %s (root: %s)", c.b.who, c.b.pid, got, c.ns, want,
				netnsOf(t, "/proc/1/ns/net"))
		}
	}

	const hold = 12 * time.Second
	time.Sleep(hold)
	end := rec.Now()
	pids := []int{f.sender.pid, f.receiver.pid}
	stopped = true
	if err := f.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	// After the start-up probes GCC holds near the link; judge the last 8 s.
	from := end - 8*time.Second
	rate := rec.Bytes(from, end) * 8 / (end - from).Seconds()
	total := rec.Bytes(0, end) * 8 / (end - up).Seconds()
	targets, rtts := rec.Targets(), rec.RTTs()
	if len(targets) == 0 || len(rtts) == 0 {
		t.Fatalf("getStats gave %d estimates and %d RTT samples", len(targets), len(rtts))
	}
	est := median(targets, from, end)
	t.Logf("goodput %.0f kbit/s over the last 8 s, %.0f kbit/s since media began; GCC's estimate (median of the last 8 s) %.0f kbit/s; %d RTT samples, last %.1f ms",
		rate/1e3, total/1e3, est/1e3, len(rtts), rtts[len(rtts)-1].V*1e3)
	if rate < 500e3 || rate > 1e6 {
		t.Errorf("goodput %.0f kbit/s over the last 8 s, want between 500 and 1000 (the link)", rate/1e3)
	}
	if est < 300e3 || est > 1.2e6 {
		t.Errorf("GCC's estimate was %.0f kbit/s over the last 8 s on a 1 Mbit/s link", est/1e3)
	}

	// The emulator saw the flow's packets cross the link: at least the payload recorded (they
	// carry headers too), never more than the link carries.
	fs := network.FlowStats("chrome")
	netRate := float64(fs.RecvBytes) * 8 / time.Since(netStart).Seconds()
	good := rec.Bytes(0, end)
	t.Logf("the emulator delivered %d packets, %d bytes (%.0f kbit/s since the link came up), dropped %d; payload recorded %.0f bytes",
		fs.RecvPackets, fs.RecvBytes, netRate/1e3, fs.Dropped, good)
	if good > float64(fs.RecvBytes) || netRate > 1.02e6 {
		t.Errorf("payload %.0f bytes against %d bytes delivered by the link at %.0f kbit/s", good, fs.RecvBytes, netRate/1e3)
	}

	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("Chromium %d still exists after Stop (kill 0: %v)", pid, err)
		}
	}
	if left, _ := os.ReadDir(work); len(left) > 0 {
		t.Errorf("Stop left %d entries in the work directory (%s...)", len(left), left[0].Name())
	}
}

// median is the median value of the samples in [from, to).
func median(s []emutest.Sample, from, to time.Duration) float64 {
	var v []float64
	for _, x := range s {
		if x.At >= from && x.At < to {
			v = append(v, x.V)
		}
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// TestBrowserFlowToEchotest sends the generated video to `strata serve`'s echotest over the same
// 1 Mbit/s emulated link: strata answers, receives (the payload counted by its admin API) and echoes, and
// Stop ends strata and the browser.
func TestBrowserFlowToEchotest(t *testing.T) {
	_, src, dst := emulated(t, "1Mbps")
	strata := emutest.BuildStrata(t)
	rec := emutest.NewRecorder()
	work := t.TempDir()
	f := startFlow(t, scenario.ReceiverEchotest, src, dst, rec, Options{WorkDir: work, Strata: strata})
	strataPID := f.echo.proc.PID()
	if got, want := netnsOf(t, fmt.Sprintf("/proc/%d/ns/net", strataPID)), fmt.Sprintf("net:[%d]", nsInode(t, dst.Name())); got != want {
		_ = f.Stop()
		t.Fatalf("strata runs in %s, want %s", got, want)
	}
	time.Sleep(8 * time.Second)
	end := rec.Now()
	if err := f.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	from := end - 6*time.Second
	rate := rec.Bytes(from, end) * 8 / (end - from).Seconds()
	est := median(rec.Targets(), from, end)
	t.Logf("echotest: goodput %.0f kbit/s over the last 6 s, GCC's estimate (median) %.0f kbit/s", rate/1e3, est/1e3)
	if rate < 200e3 || rate > 1e6 {
		t.Errorf("goodput %.0f kbit/s, want between 200 and 1000 (the link)", rate/1e3)
	}
	if err := syscall.Kill(strataPID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("strata %d still exists after Stop (kill 0: %v)", strataPID, err)
	}
	if left, _ := os.ReadDir(work); len(left) > 0 {
		t.Errorf("Stop left %d entries in the work directory (%s...)", len(left), left[0].Name())
	}
}

// New refuses what cannot run and fills what a flow built in code left out.
func TestNewChecks(t *testing.T) {
	rec := emutest.NewRecorder()
	env := endpoint.Env{Spec: scenario.Flow{Name: "x", Kind: scenario.KindBrowser}, Src: nil, Dst: nil, Rec: rec}
	if _, err := New(env, Options{}); err == nil || !strings.Contains(err.Error(), "needs both hosts") {
		t.Fatalf("no hosts: %v", err)
	}
	var h endpoint.Host = emutest.NoHost{}
	env.Src, env.Dst = h, h
	for _, c := range []struct {
		spec func(*scenario.Flow)
		opts Options
		want string
	}{
		{func(f *scenario.Flow) { f.Kind = scenario.KindMedia }, Options{}, "is a media flow"},
		{func(f *scenario.Flow) {}, Options{Chromium: "/nonexistent/chromium"}, "needs headless Chromium at /nonexistent/chromium"},
		{func(f *scenario.Flow) { f.Receiver = scenario.ReceiverEchotest }, Options{}, "receiver: echotest but no strata binary"},
		{func(f *scenario.Flow) { f.Receiver = "janus" }, Options{}, `unknown receiver "janus"`},
		{func(f *scenario.Flow) { f.Video.File = "/nonexistent/x.y4m" }, Options{}, "video file"},
	} {
		e := env
		c.spec(&e.Spec)
		if _, err := New(e, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	fl, err := New(env, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v := fl.(*flow).env.Spec.Video; v != scenario.DefaultBrowserVideo() {
		t.Fatalf("video %+v, want the defaults", v)
	}
}
