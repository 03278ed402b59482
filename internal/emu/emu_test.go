package emu

import (
	"context"
	"os"
	"testing"

	"github.com/strata-rtc/strata/internal/lab/metrics"
	"github.com/strata-rtc/strata/internal/lab/scenario"
)

// needRoot fails (never skips) when the emulator cannot run, except in
// -short mode: these tests are part of make test, which runs as root.
func needRoot(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("emulation test (needs root); not in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Fatalf("the emulation engine's tests build network namespaces and TUN devices and need root (euid %d); run them as root", os.Geteuid())
	}
}

func parseOne(t *testing.T, yaml string) *scenario.Scenario {
	t.Helper()
	f, err := scenario.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return f.Runs[0]
}

// Two kernel TCP flows through an emulated 8 Mbit/s dumbbell for 10 s: the
// engine starts both, both get throughput, together they fill the
// bottleneck, and the recording has the endpoints' and the network's
// figures in the simulator's shape.
func TestTCPDumbbell(t *testing.T) {
	needRoot(t)
	s := parseOne(t, `
name: dumbbell
duration: 10s
links:
  - {name: access, from: s, to: r1, rate: 100Mbps, delay: 1ms, queue: 1000pkt, duplex: true}
  - {name: bottleneck, from: r1, to: r2, rate: 8Mbps, delay: 10ms, queue: 60pkt, duplex: true}
  - {name: egress, from: r2, to: d, rate: 100Mbps, delay: 1ms, queue: 1000pkt, duplex: true}
flows:
  - {name: tcp, cc: cubic, count: 2, path: [s, r1, r2, d], start_step: 1s}
`)
	rec, err := Run(context.Background(), s, 1, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	sum := metrics.Summarize(rec, metrics.Meta{Scenario: s.Name, Seed: 1})
	if sum.Engine != "emu" || len(sum.Flows) != 2 {
		t.Fatalf("summary: engine %q, %d flows", sum.Engine, len(sum.Flows))
	}
	for _, f := range sum.Flows {
		if f.ThroughputBps < 1e6 || f.GoodputBps < 0.8e6 {
			t.Errorf("flow %s: throughput %.0f bit/s, goodput %.0f bit/s; want each over 1 Mbit/s", f.Name, f.ThroughputBps, f.GoodputBps)
		}
		if f.Bottleneck != "bottleneck" {
			t.Errorf("flow %s: bottleneck %q", f.Name, f.Bottleneck)
		}
		if f.QueueDelayMs.P95 <= 0 {
			t.Errorf("flow %s: no queuing delay measured (p95 %v ms)", f.Name, f.QueueDelayMs.P95)
		}
	}
	for _, l := range sum.Links {
		if l.Name == "bottleneck" && l.Utilization < 0.8 {
			t.Errorf("bottleneck utilization %.3f, want ≥ 0.8", l.Utilization)
		}
	}
	flows, _ := metrics.Series(rec)
	for _, f := range flows {
		if !hasNumber(f.Cwnd) || !hasNumber(f.RTTMs) {
			t.Errorf("flow %s: no cwnd or RTT series from the endpoints", f.Name)
		}
	}
}

func hasNumber(xs []float64) bool {
	for _, x := range xs {
		if x == x && x > 0 {
			return true
		}
	}
	return false
}

// A cancelled run ends promptly with an error naming the interruption.
func TestCancelledRun(t *testing.T) {
	needRoot(t)
	s := parseOne(t, `
duration: 60s
links:
  - {name: l, from: a, to: b, rate: 5Mbps, delay: 5ms, queue: 50pkt, duplex: true}
flows:
  - {name: t, cc: reno, path: [a, b]}
`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, s, 1, Options{Log: testLog{t}})
		done <- err
	}()
	sleepRun(1500)
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled run returned no error")
	}
	assertNoNamespaces(t, os.Getpid())
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) { l.t.Logf("%s", p); return len(p), nil }
