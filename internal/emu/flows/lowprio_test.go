package flows

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/emu/emutest"
	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/lab/scenario"
	"github.com/strata-rtc/strata/internal/sim"
)

func lowprioEnv(src, dst endpoint.Host, rec *emutest.Recorder, cc string) endpoint.Env {
	return lowprioEnvAt(src, dst, rec, cc, scenario.EndpointPion)
}

func lowprioEnvAt(src, dst endpoint.Host, rec *emutest.Recorder, cc, at string) endpoint.Env {
	return endpoint.Env{Spec: scenario.Flow{Name: "lp", Kind: scenario.KindLEDBAT, CC: cc, Endpoint: at},
		Src: src, Dst: dst, Rec: rec, Clock: rec, Seed: 1, Log: os.Stderr}
}

// TestLowPrioFlows runs each data-channel flow alone for 6 s through a 2 Mbit/s, 20 ms link with
// a 50-packet queue, with Pion and with headless Chromium sending (web/lib/lowprio.js needs
// `make wasm`): the bytes arrive (a LEDBAT receiver checks every one from a Pion sender against
// the generated stream, and Stop returns its error), the transfer takes a real share of the link
// after its start-up, and the sender reports RTTs above the path's 40 ms.
func TestLowPrioFlows(t *testing.T) {
	src, dst := newPair(t, 2e6, 20*time.Millisecond, 50)
	// Alone, a transfer takes most of the link: 1.6–1.9 Mbit/s of goodput measured, except
	// Chromium's SCTP (1.2–1.5). With maxRetransmits 0 (docs/EMU.md) LEDBAT got 1.0–1.2.
	for _, c := range []struct {
		cc, at  string
		minRate float64
	}{
		{"sctp", scenario.EndpointPion, 1.3e6}, {"ledbat", scenario.EndpointPion, 1.3e6}, {"ledbat++", scenario.EndpointPion, 1.3e6},
		{"sctp", scenario.EndpointBrowser, 1.0e6}, {"ledbat", scenario.EndpointBrowser, 1.3e6},
	} {
		t.Run(c.at+"/"+c.cc, func(t *testing.T) {
			rec := emutest.NewRecorder()
			fl, err := NewLowPrio(lowprioEnvAt(src, dst, rec, c.cc, c.at))
			if err != nil {
				t.Fatal(err)
			}
			if err := fl.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			time.Sleep(6 * time.Second)
			end := rec.Now()
			if err := fl.Stop(); err != nil {
				t.Fatal(err)
			}
			g := rec.Goodputs()
			if len(g) == 0 {
				t.Fatal("no goodput")
			}
			// From the first delivery to the stop (a reliable channel delivers in bursts after a
			// loss, so short windows over- and undershoot).
			rate := rec.Bytes(0, end) * 8 / (end - g[0].At).Seconds()
			rtts := rec.RTTs()
			t.Logf("%s: %.2f Mbit/s of goodput, %d RTT samples", c.cc, rate/1e6, len(rtts))
			if rate < c.minRate {
				t.Errorf("goodput %.0f bit/s, want ≥ %.0f", rate, c.minRate)
			}
			if len(rtts) == 0 || rtts[len(rtts)-1].V < 0.040 {
				t.Errorf("RTT samples %v, want some above 40 ms", rtts)
			}
		})
	}
}

// Specs a data-channel flow cannot run are refused before anything starts.
func TestLowPrioBadSpec(t *testing.T) {
	rec := emutest.NewRecorder()
	var h endpoint.Host = emutest.NoHost{}
	for _, c := range []struct {
		edit func(*scenario.Flow)
		want string
	}{
		{func(f *scenario.Flow) { f.CC = "cubic" }, `cc "cubic" cannot run on a data channel`},
		{func(f *scenario.Flow) { f.Kind = scenario.KindTCP }, "is not a data-channel transfer"},
		{func(f *scenario.Flow) { f.MSS = 1000 }, "takes no mss"},
		{func(f *scenario.Flow) { f.Params = sim.Params{"gain": {F: 2}} }, "only the target parameter"},
		{func(f *scenario.Flow) { f.CC = "sctp"; f.Params = sim.Params{"target": {D: time.Second}} }, "takes no controller params"},
	} {
		env := lowprioEnv(h, h, rec, "ledbat")
		c.edit(&env.Spec)
		if _, err := NewLowPrio(env); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}
