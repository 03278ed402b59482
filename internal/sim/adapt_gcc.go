package sim

import (
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/gcc"
)

func init() {
	specs := paramSpecs(gcc.DefaultConfig())
	config := func(p Params) (gcc.Config, error) {
		cfg := gcc.DefaultConfig()
		err := applyParams(&cfg, specs, p)
		return cfg, err
	}
	register(&ControllerInfo{Name: "gcc", Kind: "media", Params: specs,
		Doc: "send-side GCC as libwebrtc runs it with transport-wide feedback (trendline, AIMD, probing, ALR, loss v1)",
		build: func(p Params, _ buildEnv) (Controllers, error) {
			cfg, err := config(p)
			if err != nil {
				return Controllers{}, err
			}
			return Controllers{Rate: gcc.NewSender(gcc.WithConfig(cfg))}, nil
		}})
	register(&ControllerInfo{Name: "gcc-draft", Kind: "media", Params: specs,
		Doc: "draft-ietf-rmcat-gcc-02 as seed 003 describes it: receive-side Kalman estimator sending REMB, sender-side loss controller",
		build: func(p Params, _ buildEnv) (Controllers, error) {
			cfg, err := config(p)
			if err != nil {
				return Controllers{}, err
			}
			rx := gcc.NewReceiver(gcc.WithConfig(cfg))
			return Controllers{Rate: &draftREMB{DraftSender: gcc.NewDraftSender(gcc.WithConfig(cfg)), rx: rx},
				Rx: gccReceiveSide{rx}}, nil
		}})
	register(&ControllerInfo{Name: "gcc-draft-twcc", Kind: "media", Params: specs,
		Doc: "draft-ietf-rmcat-gcc-02's delay pipeline run at the sender on per-packet feedback",
		build: func(p Params, _ buildEnv) (Controllers, error) {
			cfg, err := config(p)
			if err != nil {
				return Controllers{}, err
			}
			return Controllers{Rate: gcc.NewDraftSender(gcc.WithConfig(cfg))}, nil
		}})
}

// draftREMB runs the draft's sender with the receiver's REMB as its delay
// based limit A_r; per-packet feedback stands in for RTCP receiver reports
// (lost and expected counts) and does not reach the delay pipeline.
type draftREMB struct {
	*gcc.DraftSender
	rx *gcc.Receiver
}

func (d *draftREMB) OnFeedback(fb cc.Feedback) {
	lost := 0
	for _, p := range fb.Packets {
		if p.Lost {
			lost++
		}
	}
	d.OnLossReport(fb.Now, lost, len(fb.Packets))
}

// OnRTT also hands the sample to the receiver, as RTCP XR would.
func (d *draftREMB) OnRTT(now, rtt time.Duration) {
	d.DraftSender.OnRTT(now, rtt)
	d.rx.OnRTT(now, rtt)
}

func (d *draftREMB) OnReport(now time.Duration, r RxReport) {
	if r.Rate > 0 {
		d.OnREMB(now, cc.BitrateFromFloat(r.Rate))
	}
}

// gccReceiveSide sends the draft receiver's REMB back with feedback.
type gccReceiveSide struct{ r *gcc.Receiver }

func (g gccReceiveSide) OnPacket(p cc.ReceivedPacket) { g.r.OnPacket(p) }

func (g gccReceiveSide) Report(now time.Duration) (RxReport, bool) {
	rate, ok := g.r.REMB(now)
	return RxReport{Rate: rate.Bps()}, ok
}
