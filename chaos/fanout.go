package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-rtc/strata/internal/load"
	"github.com/strata-rtc/strata/internal/load/plan"
	"github.com/strata-rtc/strata/internal/load/report"
	"github.com/strata-rtc/strata/internal/rig"
)

// mediaTarget is a server for the media probes: the benchmark's (videoroom, HTTP).
func mediaTarget(c config, name string) rig.Target {
	if name == "janus" {
		return rig.JanusTarget(c.Janus, c.JanusLib)
	}
	return rig.StrataTarget(c.Strata)
}

// sigtermProbe holds a fan-out of 4 live subscribers on strata, sends SIGTERM 15 s in and times
// the exit.
func sigtermProbe(ctx context.Context, c config, ns *rig.Netns, log io.Writer) ([]row, error) {
	dir, _ := filepath.Abs(filepath.Join(c.out, "sigterm", "strata"))
	proc, err := rig.Start(mediaTarget(c, "strata"), ns, dir)
	if err != nil {
		return nil, err
	}
	p := plan.FanOut(fmt.Sprintf("http://%s:%d/janus", ns.ServerIP, rig.APIPort), 4)
	p.Duration, p.Warmup, p.ICEInterfaces = time.Minute, 5*time.Second, []string{ns.HostIf}
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = load.Run(lctx, p, load.Options{MediaDir: c.MediaDir, ServerPID: proc.PID()})
	}()
	time.Sleep(15 * time.Second)
	took, status, ok := proc.Terminate(15 * time.Second)
	cancel()
	<-done
	cell := fmt.Sprintf("exit status %v after %v, 4 subscribers live", statusText(status), took.Round(10*time.Millisecond))
	if !ok {
		cell = fmt.Sprintf("still running %v after SIGTERM: killed", took.Round(time.Second))
	}
	return []row{{Probe: "SIGTERM with live calls", Bound: "exit status 0 within 10 s", Strata: cell,
		Pass: ok && status == nil && took < 10*time.Second,
		Data: map[string]any{"took_ns": took, "status": statusText(status)}}}, nil
}

func statusText(err error) string {
	if err == nil {
		return "0"
	}
	return err.Error()
}

// disruption is what a fan-out runs through: on starts it (once, or each burst), off ends it.
type disruption struct {
	name, title string
	burst       bool // on/off 1 s every 5 s, rather than the whole run
	on, off     func(ns *rig.Netns) error
}

func disruptions(c config) []disruption {
	var hogs []*exec.Cmd
	return []disruption{
		{name: "cpu-hog", title: "fan-out beside 4 busy loops",
			on: func(*rig.Netns) error {
				self, err := os.Executable()
				if err != nil {
					return err
				}
				for range 4 {
					cmd := exec.Command(self, hogCmd)
					if err := cmd.Start(); err != nil {
						return err
					}
					hogs = append(hogs, cmd)
				}
				return nil
			},
			off: func(*rig.Netns) error {
				for _, h := range hogs { // ours, by PID
					_ = h.Process.Kill()
					_ = h.Wait()
				}
				hogs = nil
				return nil
			}},
		{name: "loss-bursts", title: "fan-out through 1 s bursts of 10 % random loss every 5 s", burst: true,
			on: func(ns *rig.Netns) error {
				return nft(ns, "add table inet chaos\nadd chain inet chaos out { type filter hook output priority 0; policy accept; }\n"+
					"add rule inet chaos out meta l4proto udp numgen random mod 100 < 10 drop\n")
			},
			off: func(ns *rig.Netns) error { return nft(ns, "delete table inet chaos\n") }},
		{name: "congestion-bursts", title: fmt.Sprintf("fan-out through 1 s bursts of congestion (tbf %d kbit/s) every 5 s", congestionKbps(c)), burst: true,
			on: func(ns *rig.Netns) error {
				return tc("-n", ns.Name, "qdisc", "replace", "dev", ns.NsIf, "root", "tbf", "rate",
					fmt.Sprintf("%dkbit", congestionKbps(c)), "burst", "16kb", "latency", "100ms")
			},
			off: func(ns *rig.Netns) error { return tc("-n", ns.Name, "qdisc", "del", "dev", ns.NsIf, "root") }},
	}
}

// congestionKbps is a third of what the fan-out's subscribers receive (about 1.3 Mbit/s each).
func congestionKbps(c config) int { return c.fanout * 1300 / 3 }

func nft(ns *rig.Netns, script string) error {
	cmd := exec.Command("ip", "netns", "exec", ns.Name, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func tc(args ...string) error {
	if out, err := exec.Command("tc", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("tc %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// fanoutProbe runs the fan-out through each disruption on each target. The bound: every
// subscriber joined and receives all its streams at the end of the run (video that stopped
// during a burst came back).
func fanoutProbe(ctx context.Context, c config, ns *rig.Netns, log io.Writer) ([]row, error) {
	var rows []row
	for _, d := range disruptions(c) {
		if d.name == "loss-bursts" {
			if _, err := exec.LookPath("nft"); err != nil {
				rows = append(rows, row{Probe: d.title, Strata: "not run: nft missing (apt-get install nftables)"})
				continue
			}
		}
		r := row{Probe: d.title, Bound: "all joined; every subscription live at the end", Data: map[string]any{}}
		for _, t := range c.targets {
			res, err := fanoutOnce(ctx, c, ns, t, d, log)
			cell, pass := fanoutCell(res, err)
			r.Data[t] = res
			if t == "janus" {
				r.Janus = cell
			} else {
				r.Strata, r.Pass = cell, pass
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func fanoutOnce(ctx context.Context, c config, ns *rig.Netns, t string, d disruption, log io.Writer) (*report.Result, error) {
	dir, _ := filepath.Abs(filepath.Join(c.out, "fanout", d.name, t))
	proc, err := rig.Start(mediaTarget(c, t), ns, dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := proc.Stop(rig.StopGrace); err != nil {
			fmt.Fprintf(log, "chaos: %v\n", err)
		}
	}()
	p := plan.FanOut(fmt.Sprintf("http://%s:%d/janus", ns.ServerIP, rig.APIPort), c.fanout)
	p.Duration, p.Warmup, p.ICEInterfaces = c.hold, c.hold/3, []string{ns.HostIf}
	stop := disrupt(ctx, ns, d, c.hold, log)
	fmt.Fprintf(log, "== %s on %s\n", d.name, t)
	res, err := load.Run(ctx, p, load.Options{MediaDir: c.MediaDir, ServerPID: proc.PID(), Progress: log})
	stop()
	if err == nil {
		err = report.Write(dir, res)
	}
	if !proc.Alive() {
		return res, fmt.Errorf("%s died: %s", t, rig.Tail(proc.Log))
	}
	return res, err
}

// disrupt starts d: at once for the whole run, or as 1 s bursts every 5 s from 8 s in until 12 s
// before the hold ends (so the end of the run shows whether the server recovered).
func disrupt(ctx context.Context, ns *rig.Netns, d disruption, hold time.Duration, log io.Writer) (stop func()) {
	report := func(err error) {
		if err != nil {
			fmt.Fprintf(log, "chaos: %s: %v\n", d.name, err)
		}
	}
	if !d.burst {
		report(d.on(ns))
		return func() { report(d.off(ns)) }
	}
	bctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		end := time.Now().Add(hold - 4*time.Second) // joins take a few seconds before the hold
		t := time.NewTimer(8 * time.Second)
		for {
			select {
			case <-bctx.Done():
				return
			case <-t.C:
			}
			if time.Now().After(end) {
				return
			}
			report(d.on(ns))
			time.Sleep(time.Second)
			report(d.off(ns))
			t.Reset(4 * time.Second)
		}
	}()
	return func() { cancel(); <-done }
}

func fanoutCell(r *report.Result, err error) (string, bool) {
	if r == nil {
		return fmt.Sprintf("error: %v", err), false
	}
	t := r.Totals
	cell := fmt.Sprintf("%.0f Mbit/s out, loss %.2f %%, %d freezes, %d/%d subscriptions live at the end",
		t.ForwardedMbps, 100*t.MeanLossRatio, t.Freezes, t.CompleteSubscribers, r.Plan.Subscribers)
	if err != nil {
		cell += "; " + err.Error()
	}
	return cell, err == nil && t.FailedJoins == 0 && t.CompleteShare == 1
}

// hogCmd is the hidden sub-command that is one busy loop (the CPU hog).
const hogCmd = "__hog"

func hog() {
	for x := 0; ; x++ {
		_ = x * x
	}
}
