// Package cc holds strata's congestion controllers as pure, clock-free algorithms, and the few types
// they share.
//
// Every controller is a plain value driven by its caller: time comes in as an argument (a
// time.Duration since an arbitrary epoch chosen by the caller), inputs are what transport feedback
// carries, and outputs are read back with getters. No controller reads the wall clock, starts a
// goroutine, does I/O or draws random numbers, so the same code runs in the server (behind Pion
// interceptors), in the network simulator, and in trace-replay tests, and the same inputs always
// give bit-identical outputs.
//
// Three shapes of controller exist:
//
//   - RateController: a sender-side, rate-based estimator fed with per-packet feedback
//     (TWCC/RFC 8888 style) and RTT samples; it yields a target rate for the encoder and a pacing
//     rate. Implemented by gcc.Sender (libwebrtc's send-side GCC), gcc.DraftSender
//     (draft-ietf-rmcat-gcc-02 on feedback) and nada.Sender (RFC 8698).
//   - ReceiverEstimator: runs where the media arrives, per received packet; gcc.Receiver yields a
//     REMB value, nada.Receiver yields NADA's periodic feedback report.
//   - WindowController: a window-based controller told about acks (including duplicates), losses
//     and timeouts; it yields a congestion window in bytes. Implemented by ledbat.Controller
//     (RFC 6817 and LEDBAT++) and the tcp models (Reno, NewReno, Cubic).
//
// The subpackages are gcc, nada, ledbat and tcp. Parameters are set with functional options whose
// defaults are the RFC or draft values; docs/CC.md lists them with their sources.
//
// Clocks: SendTime, Now and the times of acks are the sender's clock; Arrival is the receiver's,
// with any offset (TWCC reference time, another host's clock). Controllers use only differences
// within one clock and differences of Arrival − SendTime, so the offset never matters. Times must
// stay within about ±100 years of the epoch so that differences cannot overflow.
//
// Helpers shared by callers: Bitrate (bit/s, with Kbps and Mbps units), RTTEstimator (RFC 6298),
// AbsSendTimeUnwrapper (the abs-send-time RTP header extension to a monotonic time),
// SeqUnwrapper (16-bit sequence numbers to SeqNo) and PacingRateFor.
package cc
