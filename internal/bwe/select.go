package bwe

import (
	"fmt"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/gcc"
	"github.com/strata-rtc/strata/cc/nada"
	"github.com/strata-rtc/strata/internal/config"
)

// NewControllerFunc returns a constructor of the send-side controller the configuration names, or
// nil for "none".
func NewControllerFunc(c config.CongestionControl) (func() cc.RateController, error) {
	initial, lo, hi := cc.Bitrate(c.InitialBitrate), cc.Bitrate(c.MinBitrate), cc.Bitrate(c.MaxBitrate)
	switch c.Estimator {
	case "gcc":
		return func() cc.RateController {
			return gcc.NewSender(gcc.WithInitialRate(initial), gcc.WithMinRate(lo), gcc.WithMaxRate(hi))
		}, nil
	case "gcc-draft":
		return func() cc.RateController {
			return gcc.NewDraftSender(gcc.WithInitialRate(initial), gcc.WithMinRate(lo), gcc.WithMaxRate(hi))
		}, nil
	case "nada":
		return func() cc.RateController {
			return nada.NewSender(nada.WithInitialRate(initial), nada.WithRMin(lo), nada.WithRMax(hi))
		}, nil
	case "none", "":
		return nil, nil
	}
	return nil, fmt.Errorf("unknown estimator %q", c.Estimator)
}

// NewReceiverFunc returns a constructor of the receive-side (REMB) estimator the configuration
// names, or nil for "none".
func NewReceiverFunc(c config.CongestionControl) (func() *gcc.Receiver, error) {
	switch c.REMBEstimator {
	case "gcc-draft":
		initial, lo, hi := cc.Bitrate(c.InitialBitrate), cc.Bitrate(c.MinBitrate), cc.Bitrate(c.MaxBitrate)
		return func() *gcc.Receiver {
			return gcc.NewReceiver(gcc.WithInitialRate(initial), gcc.WithMinRate(lo), gcc.WithMaxRate(hi))
		}, nil
	case "none", "":
		return nil, nil
	}
	return nil, fmt.Errorf("unknown REMB estimator %q", c.REMBEstimator)
}
