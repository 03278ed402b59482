// Package gcc implements Google Congestion Control in two variants, as pure clock-free algorithms.
//
// The draft variant follows draft-ietf-rmcat-gcc-02 (the algorithm seed 003 describes): packets are
// grouped by send time (5 ms bursts), a scalar Kalman filter estimates the inter-group delay
// variation m(i), an over-use detector compares it with an adaptive threshold (k_u = 0.01,
// k_d = 0.00018), and an AIMD rate controller increases the estimate by η = 1.08 per second
// (additively near convergence), decreases it to β = 0.85 × the received rate on over-use, and
// caps it at 1.5 × the received rate. Receiver runs it where the media arrives and yields REMB
// values; DraftSender runs it on transport feedback at the sender and adds the draft's loss-based
// controller (loss > 10 %: rate·(1 − 0.5p); loss < 2 %: rate·1.05).
//
// The send-side variant, Sender, follows the published behaviour of libwebrtc's goog_cc with
// transport-wide feedback: a trendline estimator (window 20, smoothing 0.9, gain 4) with its own
// threshold gains, AIMD with a link-capacity estimate, an acknowledged-bitrate estimator, probing
// (initial probes at 3× and 6× the start rate, further probes while results keep up, on-demand,
// periodic probes in application-limited periods and a recovery probe after a large drop) with a
// probe-result estimator, application-limited-region (ALR) detection, and the v1 loss-based
// controller.
//
// The components are shared where the two agree (send-time grouping, the over-use detector, the
// link-capacity/“near max” estimate, AIMD); comments in each file say which source each rule
// follows. Where seed 003 disagrees with the draft, the draft is followed and the difference noted:
// the seed writes the delay variation as a ratio (t_i − t_{i−1}) / (T_i − T_{i−1}) where the draft
// has a difference, quotes 1.05 as the increase factor (draft: 1.08 per second; 1.05 is the loss
// controller's step), an over-use time of 100 ms (draft: 10 ms), and a threshold update driven by
// |m_i − γ| (draft: |m_i| − γ).
package gcc
