package topo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/sim"
)

// BenchmarkEmulatorCPU measures the emulator's cost: iperf3 (processes of
// their own) pushes UDP at the link's rate, or TCP reno, through one
// emulated link for 5 s while the threads' schedstat counts the CPU of the
// link process and this one — the link's reader and writer threads, with
// the kernel forwarding they do — per emulated Mbit/s delivered. Run it
// alone:
//
//	go test -run '^$' -bench EmulatorCPU -benchtime 1x ./internal/emu/topo
func BenchmarkEmulatorCPU(b *testing.B) {
	for _, mbps := range []float64{10, 100} {
		for _, proto := range []string{"udp", "tcp"} {
			b.Run(fmt.Sprintf("%s-%gMbps", proto, mbps), func(b *testing.B) {
				for range b.N {
					cpu, got := emulatorCPU(b, mbps*1e6, proto)
					b.ReportMetric(100*cpu, "%cpu")
					b.ReportMetric(got/1e6, "Mbit/s")
					b.ReportMetric(100*cpu/(got/1e6), "%cpu/Mbit/s")
				}
			})
		}
	}
}

// emulatorCPU returns this process's CPU use (cores) and the delivered rate.
func emulatorCPU(b *testing.B, bps float64, proto string) (float64, float64) {
	const secs = 5
	n := twoNodes(b, sim.LinkConfig{Rate: sim.ConstantRate(bps), Delay: 10 * time.Millisecond,
		Queue: sim.Limit{Unit: sim.LimitTime, Value: 0.05}}, 10*time.Second)
	n.Start(time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := n.Host("hb").Command(ctx, "iperf3", "-s", "-1", "-p", "5201")
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = srv.Wait() }()
	time.Sleep(200 * time.Millisecond)
	args := []string{"-c", n.Host("hb").Addr().String(), "-p", "5201", "-t", fmt.Sprint(secs), "-J"}
	if proto == "udp" {
		args = append(args, "-u", "-b", fmt.Sprint(int(bps)), "-l", "1200")
	} else {
		args = append(args, "-C", "reno")
	}
	cpu0 := emulatorRuntime(n)
	start := time.Now()
	out, err := n.Host("ha").Command(ctx, "iperf3", args...).Output()
	wall := time.Since(start)
	cpu := emulatorRuntime(n) - cpu0
	if err != nil {
		b.Fatalf("iperf3: %v\n%s", err, out)
	}
	var res struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
			Sum struct {
				BitsPerSecond float64 `json:"bits_per_second"`
				LostPercent   float64 `json:"lost_percent"`
			} `json:"sum"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		b.Fatal(err)
	}
	got := res.End.SumReceived.BitsPerSecond
	if proto == "udp" {
		got = res.End.Sum.BitsPerSecond * (1 - res.End.Sum.LostPercent/100)
	}
	return cpu.Seconds() / wall.Seconds(), got
}

// schedRuntime sums the run time of a process's threads from
// /proc/PID/task/*/schedstat (exact to the nanosecond, where getrusage
// samples ticks).
func schedRuntime(pid int) time.Duration {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, _ := os.ReadDir(dir)
	var sum time.Duration
	for _, d := range tasks {
		b, err := os.ReadFile(dir + "/" + d.Name() + "/schedstat")
		if err != nil {
			continue
		}
		var ns int64
		_, _ = fmt.Sscan(string(b), &ns)
		sum += time.Duration(ns)
	}
	return sum
}

// emulatorRuntime is the CPU the emulation uses: the link process's and this
// process's (the test's own part is small: it only waits for iperf3).
func emulatorRuntime(n *Network) time.Duration {
	return schedRuntime(n.proc.cmd.Process.Pid) + schedRuntime(os.Getpid())
}

// BenchmarkDumbbellCPU is the emulator's cost in the shape the lab runs
// most: six TCP flows (iperf3, cubic) through a → l → r → b, a 10 Mbit/s,
// 20 ms bottleneck between 100 Mbit/s access links, so every data packet
// crosses three emulated links and every ACK three more.
//
//	go test -run '^$' -bench DumbbellCPU -benchtime 1x ./internal/emu/topo
func BenchmarkDumbbellCPU(b *testing.B) {
	const flows, secs = 6, 5
	emutest.NeedRoot(b)
	fast, rate := sim.ConstantRate(100e6), sim.ConstantRate(10e6)
	spec := Spec{Links: []sim.LinkConfig{
		{Name: "al", From: "a", To: "l", Rate: fast, Delay: 5 * time.Millisecond},
		{Name: "lr", From: "l", To: "r", Rate: rate, Delay: 20 * time.Millisecond, Queue: sim.Limit{Unit: sim.LimitPackets, Value: 100}},
		{Name: "rb", From: "r", To: "b", Rate: fast, Delay: 5 * time.Millisecond},
		{Name: "br", From: "b", To: "r", Rate: fast, Delay: 5 * time.Millisecond},
		{Name: "rl", From: "r", To: "l", Rate: fast, Delay: 20 * time.Millisecond},
		{Name: "la", From: "l", To: "a", Rate: fast, Delay: 5 * time.Millisecond},
	}, Duration: 20 * time.Second, Interval: 100 * time.Millisecond}
	for i := range flows {
		s, d := fmt.Sprintf("s%d", i), fmt.Sprintf("d%d", i)
		spec.Hosts = append(spec.Hosts, HostSpec{s, "a"}, HostSpec{d, "b"})
		spec.Flows = append(spec.Flows, FlowSpec{Name: fmt.Sprint("f", i), Src: s, Dst: d, Path: []string{"a", "l", "r", "b"}})
	}
	for range b.N {
		n, err := Build(context.Background(), spec)
		if err != nil {
			b.Fatal(err)
		}
		n.Start(time.Now())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var servers []*exec.Cmd
		for i := range flows {
			srv := n.Host(fmt.Sprint("d", i)).Command(ctx, "iperf3", "-s", "-1")
			if err := srv.Start(); err != nil {
				b.Fatal(err)
			}
			servers = append(servers, srv)
		}
		time.Sleep(300 * time.Millisecond)
		cpu0 := emulatorRuntime(n)
		start := time.Now()
		var clients []*exec.Cmd
		for i := range flows {
			c := n.Host(fmt.Sprint("s", i)).Command(ctx, "iperf3", "-c", n.Host(fmt.Sprint("d", i)).Addr().String(),
				"-t", fmt.Sprint(secs), "-C", "cubic")
			if err := c.Start(); err != nil {
				b.Fatal(err)
			}
			clients = append(clients, c)
		}
		for _, c := range append(clients, servers...) {
			_ = c.Wait()
		}
		wall := time.Since(start)
		cpu := emulatorRuntime(n) - cpu0
		cancel()
		var delivered int64
		for i := range flows {
			delivered += n.FlowStats(fmt.Sprint("f", i)).RecvBytes
		}
		b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "%cpu")
		b.ReportMetric(float64(delivered)*8/wall.Seconds()/1e6, "Mbit/s")
		if err := n.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
