package sim

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// The simulator drives the cc package's controllers directly through its
// interfaces (cc.RateController, cc.WindowController, cc.ReceiverEstimator):
// flows convert simulated packets into the controllers' inputs and give them
// the simulated time. Only the receive-side halves need a small adapter,
// because what they send back (a REMB value, a NADA report) differs per
// algorithm; RxReport carries it in the feedback packet.

// RxReport is what a receive-side estimator sends back with feedback.
type RxReport struct {
	Rate   float64 // an estimate in bit/s (GCC's REMB), 0 if none
	Signal float64 // a congestion signal in seconds (NADA's x_curr)
	Recv   float64 // the receiver's measured receive rate in bit/s
	Mode   int8    // a mode flag (NADA's rmode)
}

// ReceiveSide is the receive-side half of a media controller.
type ReceiveSide interface {
	OnPacket(p cc.ReceivedPacket)
	// Report returns the values for the next feedback packet; ok is false
	// when there is nothing to send.
	Report(now time.Duration) (r RxReport, ok bool)
}

// ReportConsumer is implemented by sender-side controllers (or their
// adapters) that take a receive-side report.
type ReportConsumer interface {
	OnReport(now time.Duration, r RxReport)
}
