// Package ledbat implements LEDBAT, Low Extra Delay Background Transport (RFC 6817), and
// LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus-01) as one window controller.
//
// RFC 6817: the queuing delay is the current delay (the minimum of the last CURRENT_FILTER = 4
// one-way-delay samples) minus the base delay (the minimum over BASE_HISTORY = 10 one-minute
// buckets). On every ack, cwnd += GAIN·(TARGET − queuing_delay)/TARGET·bytes_acked·MSS/cwnd, with
// TARGET = 100 ms and GAIN = 1; cwnd never exceeds flightsize + ALLOWED_INCREASE·MSS nor falls below
// MIN_CWND·MSS (2); a loss halves it at most once per RTT and a timeout resets it to one MSS. The
// RFC has no slow start, and neither has this mode.
//
// LEDBAT++ (WithPlusPlus): delay is measured as RTT (no receiver timestamps needed), TARGET is
// 60 ms, GAIN = 1/min(16, ⌈2·TARGET/base⌉) so the flow is slower than Reno on short paths, the
// initial slow start grows by GAIN per acked byte and exits once the queuing delay exceeds ¾
// TARGET, above TARGET the window decreases multiplicatively — per RTT
// W += max(GAIN − W·(qd/TARGET − 1), −W/2) — and periodic slowdowns (2 RTTs after slow start, cwnd
// held at 2 packets for 2 RTTs, then slow start back to the previous window; repeated after 9× the
// last slowdown's duration) let every flow re-measure the base delay, which fixes the latecomer
// advantage. The draft's per-RTT formulas are applied per ack in proportion to bytes acked, in
// floating point (the ns-3 port's integer divisions zero GAIN and the decrease).
//
// Seed 002 puts LEDBAT into WebRTC by swapping SCTP for libutp (target 100 ms); strata keeps the
// controller separate so a data channel sender can limit its in-flight bytes to Cwnd.
package ledbat
