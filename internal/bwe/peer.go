package bwe

import (
	"time"

	"github.com/pion/interceptor"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/peer"
)

// tickInterval is how often controllers run their timers between feedback messages.
const tickInterval = 50 * time.Millisecond

// PeerOptions returns the peer.Factory options that put the configured estimators on every
// PeerConnection: the send-side controller (installed as the Peer's Estimator) and the REMB
// receiver, both shown in the admin API's handle_info under webrtc.bwe. onEstimate, if not nil,
// gets the send-side estimate after every feedback message (a few a second per PeerConnection; it
// must not block), for the metrics.
func PeerOptions(m config.Media, onEstimate func(cc.Bitrate)) ([]peer.Option, error) {
	newController, err := NewControllerFunc(m.CongestionControl)
	if err != nil {
		return nil, err
	}
	newReceiver, err := NewReceiverFunc(m.CongestionControl)
	if err != nil {
		return nil, err
	}
	if !m.TWCC {
		newController = nil // no feedback to drive it
	}
	if newController == nil && newReceiver == nil {
		return nil, nil
	}
	opts := []peer.Option{peer.WithInterceptor(func(p *peer.Peer) (interceptor.Factory, error) {
		return FactoryFunc(func(string) (interceptor.Interceptor, error) {
			var chain []interceptor.Interceptor
			info := &bweInfo{twcc: m.TWCC}
			if newController != nil {
				s := NewSendSide(newController(), tickInterval)
				s.est.onEstimate = onEstimate
				p.SetEstimator(s.Estimator())
				info.send = s.Estimator()
				chain = append(chain, s)
			}
			if newReceiver != nil {
				r := NewReceiveSide(newReceiver())
				info.recv = r
				chain = append(chain, r)
			}
			p.SetBWEInfo(info.snapshot)
			return interceptor.NewChain(chain), nil
		}), nil
	})}
	if newController != nil {
		opts = append(opts, peer.WithTWCCStamper())
	}
	return opts, nil
}

// bweInfo assembles the `bwe` part of handle_info.
type bweInfo struct {
	twcc bool
	send *Estimator
	recv *ReceiveSide
}

func (b *bweInfo) snapshot() any {
	out := map[string]any{"twcc": b.twcc}
	if b.send != nil {
		out["estimator"] = b.send.State()
		out["feedback_packets"] = b.send.FeedbackCount()
	}
	if b.recv != nil {
		out["remb_estimator"] = b.recv.State()
		out["remb_sent"] = b.recv.REMBCount()
	}
	return out
}
