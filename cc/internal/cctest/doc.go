// Package cctest is the closed-loop test harness for strata's congestion controllers: a single
// FIFO bottleneck with fixed capacity, a drop-tail buffer and a propagation delay, and two
// senders driven by the same simulated time — a media sender for rate controllers (feedback every
// FeedbackInterval, returned over the uncongested reverse path) and a minimal reliable transport
// for window controllers (cumulative acks, duplicate acks, fast retransmit on the controller's
// word, RTO). It is deliberately small and deterministic; the full simulator lives in
// internal/sim.
package cctest
