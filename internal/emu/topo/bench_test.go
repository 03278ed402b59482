package topo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-rtc/strata/internal/sim"
)

// BenchmarkEmulatorCPU measures the emulator's cost: iperf3 (processes of
// their own) pushes UDP at the link's rate, or TCP reno, through one
// emulated link for 5 s while getrusage counts this process's CPU — the
// link's reader and writer threads, with the kernel forwarding they do — per
// emulated Mbit/s delivered. Run it alone:
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
	var before, after unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &before)
	rt0 := schedRuntime()
	start := time.Now()
	out, err := n.Host("ha").Command(ctx, "iperf3", args...).Output()
	wall := time.Since(start)
	_ = unix.Getrusage(unix.RUSAGE_SELF, &after)
	b.Logf("schedstat: %.2f %%", 100*(schedRuntime()-rt0).Seconds()/wall.Seconds())
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
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	return cpu.Seconds() / wall.Seconds(), got
}

// schedRuntime sums this process's threads' run time from
// /proc/self/task/*/schedstat (exact, where getrusage samples ticks).
func schedRuntime() time.Duration {
	dirs, _ := os.ReadDir("/proc/self/task")
	var sum time.Duration
	for _, d := range dirs {
		b, err := os.ReadFile("/proc/self/task/" + d.Name() + "/schedstat")
		if err != nil {
			continue
		}
		var ns int64
		fmt.Sscan(string(b), &ns)
		sum += time.Duration(ns)
	}
	return sum
}
