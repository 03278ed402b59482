// Package tcp models TCP's loss-based congestion controllers — Reno (RFC 5681), NewReno
// (RFC 6582) and Cubic (RFC 9438) — as pure window controllers, so that simulated fairness
// experiments pit strata's media controllers against real TCP behaviour.
//
// The caller's transport owns sequence numbers and retransmissions; the model owns the window in
// bytes, ssthresh, duplicate-ack counting, fast retransmit/fast recovery and the RFC 6298
// retransmission timeout with backoff:
//
//   - slow start: cwnd += min(acked, MSS) per ack while cwnd < ssthresh (RFC 5681 §3.1);
//   - congestion avoidance: Reno/NewReno cwnd += MSS·acked/cwnd; Cubic follows
//     W(t) = C·(t − K)³ + W_max with C = 0.4, K = ∛(W_max·(1 − β)/C), β = 0.7, fast convergence
//     and the Reno-friendly region (RFC 9438 §4);
//   - on the third duplicate ack: ssthresh = max(FlightSize/2, 2·MSS) (Cubic: β·FlightSize),
//     cwnd = ssthresh + 3·MSS, retransmit; each further duplicate inflates cwnd by one MSS;
//   - Reno leaves recovery on the first new ack; NewReno stays until the ack covers everything that
//     was in flight when recovery began (the recovery point, tracked as that FlightSize so no
//     sequence numbers are needed) and answers each partial ack with a retransmission, deflating
//     cwnd by the bytes acked and adding back one MSS; both leave with cwnd = ssthresh (RFC 6582
//     §3.2 option 2). Cubic uses NewReno's recovery;
//   - on a retransmission timeout: ssthresh as on loss, cwnd = one MSS (the loss window), RTO
//     doubled;
//   - an ECN echo (Ack.CE) reduces like a loss, at most once per RTT, without retransmitting.
//
// Not modelled: SACK, HyStart, RFC 6582's guard against a second fast retransmit after a timeout,
// Linux's PRR. PacingRate follows Linux's defaults: 2 × cwnd/SRTT in slow start, 1.2 × after.
package tcp
