package sfuflow

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/sim"
)

type wallClock struct{ t0 time.Time }

func (c wallClock) Now() time.Duration { return time.Since(c.t0) }

type goodput struct{ bytes atomic.Int64 }

func (g *goodput) Goodput(n int)              { g.bytes.Add(int64(n)) }
func (g *goodput) Target(float64)             {}
func (g *goodput) Cwnd(float64)               {}
func (g *goodput) RTT(time.Duration)          {}
func (t testLog) Write(p []byte) (int, error) { t.Log(string(p)); return len(p), nil }

type testLog struct{ *testing.T }

func buildStrata(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "strata")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/strata")
	cmd.Dir = "../../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/strata: %v: %s", err, out)
	}
	return bin
}

// One session on a free path reaches the top layer; with the subscriber's downlink capped below
// the top layer's rate the SFU forwards a lower one.
func TestSessionTopLayerThenCap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds network namespaces and runs strata (root)")
	}
	net := newStar(t, "pub", "sfu", "sub")
	bin := buildStrata(t)
	u := &scenario.SFU{Node: "sfu", Policy: "bwe", Sessions: []scenario.SFUSession{{Name: "s",
		Layers: []float64{150e3, 250e3, 800e3}, Path: []string{"pub", "sfu", "sub"}, Stop: 30 * time.Second}}}
	rec := &goodput{}
	clock := wallClock{time.Now()}
	ss, err := New(Env{SFU: u, SFUHost: net.hosts["sfu"], Binary: bin, Clock: clock, Log: testLog{t},
		Links:    []sim.LinkConfig{{Name: "pub-sfu", From: "pub", To: "sfu", Rate: sim.ConstantRate(100e6)}},
		Sessions: []Session{{Name: "s", Pub: net.hosts["pub"], Sub: net.hosts["sub"], Rec: rec}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ss.Start(ctx); err != nil {
		_ = ss.Stop()
		t.Fatal(err)
	}
	pids := ss.pids()
	stopped := false
	defer func() {
		if !stopped {
			_ = ss.Stop()
		}
	}()
	up := clock.Now()
	if !waitFor(8*time.Second, func() bool { return ss.Forwarding()["s"] == 3 }) {
		t.Fatalf("the subscriber did not reach the top layer in 8 s on a free path (layer %d); %+v", ss.Forwarding()["s"], ss.Summaries())
	}
	t.Logf("top layer %v after the session was up", (clock.Now() - up).Round(time.Millisecond))
	net.limit("sub", 700) // the top layer is 1.2 Mbit/s, the middle one 0.4
	cut := clock.Now()
	if !waitFor(10*time.Second, func() bool { l := ss.Forwarding()["s"]; return l > 0 && l < 3 }) {
		t.Fatalf("the SFU still forwards layer %d 10 s after the cut to 700 kbit/s", ss.Forwarding()["s"])
	}
	t.Logf("layer %d %v after the cut", ss.Forwarding()["s"], (clock.Now() - cut).Round(time.Millisecond))
	time.Sleep(2 * time.Second)
	stopped = true
	if err := ss.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	sum := ss.Summaries()
	t.Logf("summary %+v", sum)
	l := sum[0].Layers
	if len(l) != 3 || l[2].Sent == 0 || l[0].Sent+l[1].Sent == 0 {
		t.Errorf("want packets of the top layer and of a lower one: %+v", l)
	}
	for _, x := range l {
		if x.Lost < 0 || x.Lost > x.Sent {
			t.Errorf("layer %d: lost %d of %d", x.Layer, x.Lost, x.Sent)
		}
	}
	if rec.bytes.Load() == 0 {
		t.Error("no goodput recorded")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("strata process %d still there after Stop (%v)", pid, err)
		}
	}
}

func waitFor(limit time.Duration, ok func() bool) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return ok()
}
