package topo

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// TestTCPThroughEmulator checks that kernel TCP crosses a link whole: no
// segmentation offload hands the emulator packets larger than the MTU (it
// would serialise a 64 KB aggregate as one packet), and reno reaches most of
// a 10 Mbit/s link.
func TestTCPThroughEmulator(t *testing.T) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Fatal("iperf3 is needed (scripts/install-deps.sh test installs it)")
	}
	n := twoNodes(t, sim.LinkConfig{Rate: sim.ConstantRate(10e6), Delay: 10 * time.Millisecond,
		Queue: sim.Limit{Unit: sim.LimitBytes, Value: 64000}}, 10*time.Second)
	n.Start(time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv := n.Host("hb").Command(ctx, "iperf3", "-s", "-1", "-p", "5201")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Wait()
	time.Sleep(200 * time.Millisecond)
	out, err := n.Host("ha").Command(ctx, "iperf3", "-c", n.Host("hb").Addr().String(), "-p", "5201",
		"-t", "3", "-C", "reno", "-f", "m").CombinedOutput()
	if err != nil {
		t.Fatalf("iperf3: %v\n%s", err, out)
	}
	st := n.FlowStats("f")
	c := n.Counters()[0]
	t.Logf("%s\nlink: %+v\nflow: sent %d B, delivered %d B, %d dropped", out, c, st.SentBytes, st.RecvBytes, st.Dropped)
	if c.Oversize > 0 || c.MaxSize > 1500 {
		t.Fatalf("%d packets over the MTU reached the emulator (largest %d B): segmentation offload is on", c.Oversize, c.MaxSize)
	}
	rate := float64(st.RecvBytes) * 8 / 3
	if rate < 0.8*10e6 {
		t.Fatalf("TCP delivered %.3g bit/s through a 10 Mbit/s link", rate)
	}
}
