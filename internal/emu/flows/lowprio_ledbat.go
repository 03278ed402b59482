package flows

import (
	"context"
	"fmt"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
	"github.com/strata-rtc/strata/internal/lowprio/dc"
)

// ledbatStream is the generated stream a LEDBAT flow sends: longer than any run (1 TB at
// 1 Gbit/s takes over two hours), so the transfer is bulk for the flow's whole life.
const ledbatStream = int64(1) << 40

// ledbatName is the transfer's name in its channel's label.
var ledbatName = dc.GenPrefix + fmt.Sprint(ledbatStream)

func ledbatChannel() (string, *webrtc.DataChannelInit) { return dc.Label("put", ledbatName), dc.Init() }

// ledbatOptions are the binding's options for the flow's variant and target; the sender's
// progress goes to the recorder (its smoothed RTT and window) every sampleEvery.
func (f *LowPrio) ledbatOptions(send bool) dc.Options {
	o := dc.Options{Variant: f.cc, Target: f.target, ProgressInterval: sampleEvery}
	if send {
		o.Progress = func(p dc.Progress) { recordProgress(f.env.Rec, p) }
	}
	return o
}

func recordProgress(rec endpoint.Recorder, p dc.Progress) {
	if p.RTT > 0 {
		rec.RTT(p.RTT)
	}
	if p.Cwnd > 0 {
		rec.Cwnd(float64(p.Cwnd))
	}
}

func (f *LowPrio) sendLEDBAT(ctx context.Context, ch *webrtc.DataChannel) error {
	st, err := dc.Send(ctx, ch, dc.Generated(ledbatStream), f.ledbatOptions(true))
	logStats(f.env, "sender", st)
	return endErr("LEDBAT sender", ctx, err)
}

func (f *LowPrio) receiveLEDBAT(ctx context.Context, ch *webrtc.DataChannel) error {
	return receiveLEDBAT(ctx, f.env, ch, f.ledbatOptions(false))
}

// logStats writes a transfer end's figures to the run's log.
func logStats(env endpoint.Env, who string, st dc.Stats) {
	if env.Log != nil {
		fmt.Fprintf(env.Log, "flow %s: LEDBAT %s: %d bytes in order in %v, %d retransmissions, %d timeouts, %d messages dropped (behind)\n",
			env.Spec.Name, who, st.Bytes, st.Elapsed.Round(time.Millisecond), st.Retransmits, st.Timeouts, st.Dropped)
	}
}

// receiveLEDBAT receives the generated stream on ch, checking every byte against dc.Generated
// (web/lib/lpgen.js generates the same stream in a browser) and counting it as goodput, until ctx
// ends.
func receiveLEDBAT(ctx context.Context, env endpoint.Env, ch *webrtc.DataChannel, o dc.Options) error {
	w := &goodputWriter{rec: env.Rec, v: dc.Verifier{N: ledbatStream}}
	st, err := dc.Receive(ctx, ch, w, o)
	logStats(env, "receiver", st)
	return endErr("LEDBAT receiver", ctx, err)
}

// endErr is nil for a transfer that ended because the flow stopped.
func endErr(who string, ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("%s: %w", who, err)
}

// goodputWriter checks the received stream and records it as goodput.
type goodputWriter struct {
	rec endpoint.Recorder
	v   dc.Verifier
}

func (g *goodputWriter) Write(p []byte) (int, error) {
	n, err := g.v.Write(p)
	g.rec.Goodput(n)
	return n, err
}
