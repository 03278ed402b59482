package sim

import (
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/nada"
)

func init() {
	specs := paramSpecs(nada.DefaultConfig())
	config := func(p Params) (nada.Config, error) {
		cfg := nada.DefaultConfig()
		err := applyParams(&cfg, specs, p)
		return cfg, err
	}
	register(&ControllerInfo{Name: "nada", Kind: "media", Params: specs,
		Doc: "RFC 8698 NADA with the receiver computing x_curr and sending a report every DELTA",
		build: func(p Params, _ buildEnv) (Controllers, error) {
			cfg, err := config(p)
			if err != nil {
				return Controllers{}, err
			}
			s := nada.NewSender(nada.WithConfig(cfg))
			return Controllers{Rate: &nadaRx{Sender: s}, Rx: nadaReceiveSide{nada.NewReceiver(nada.WithConfig(cfg))}}, nil
		}})
	register(&ControllerInfo{Name: "nada-sender", Kind: "media", Params: specs,
		Doc: "RFC 8698 NADA computing the congestion signal at the sender from per-packet feedback (as ns3-rmcat does)",
		build: func(p Params, _ buildEnv) (Controllers, error) {
			cfg, err := config(p)
			if err != nil {
				return Controllers{}, err
			}
			return Controllers{Rate: nada.NewSender(nada.WithConfig(cfg))}, nil
		}})
}

// nadaRx is a NADA sender driven by the receiver's reports; per-packet
// feedback only serves RTT measurement.
type nadaRx struct{ *nada.Sender }

func (n *nadaRx) OnFeedback(cc.Feedback) {}

func (n *nadaRx) OnReport(now time.Duration, r RxReport) {
	n.Sender.OnReport(now, nada.Report{RMode: int(r.Mode), XCurr: time.Duration(r.Signal * 1e9),
		RRecv: cc.BitrateFromFloat(r.Recv)})
}

type nadaReceiveSide struct{ r *nada.Receiver }

func (n nadaReceiveSide) OnPacket(p cc.ReceivedPacket) { n.r.OnPacket(p) }

func (n nadaReceiveSide) Report(now time.Duration) (RxReport, bool) {
	rep := n.r.Report(now)
	return RxReport{Signal: rep.XCurr.Seconds(), Recv: rep.RRecv.Bps(), Mode: int8(rep.RMode)}, true
}
