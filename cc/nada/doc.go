// Package nada implements NADA, Network-Assisted Dynamic Adaptation (RFC 8698), as a pure
// clock-free algorithm.
//
// The receiver side (Receiver) turns every received packet into an aggregate congestion signal:
// the queuing delay d_queue = d_fwd − d_base (base delay tracked as the minimum over ten one-minute
// buckets, samples through a 15-tap minimum filter), warped non-linearly above QTH while losses are
// recent, plus the loss and ECN-marking penalties DLOSS·(p_loss/PLRREF)² + DMARK·(p_mark/PMRREF)²;
// every DELTA it reports {rmode, x_curr, r_recv}. The sender (Sender) ramps up quickly while
// rmode = 0 — r_ref = max(r_ref, (1+γ)·r_recv), γ = min(GAMMA_MAX, QBOUND/(rtt+DELTA+DFILT)) — and
// otherwise follows the gradual update
//
//	x_offset = x_curr − PRIO·XREF·RMAX/r_ref
//	r_ref   −= KAPPA·(δ/TAU)·(x_offset/TAU)·r_ref + KAPPA·ETA·((x_curr − x_prev)/TAU)·r_ref
//
// whose equilibrium x_curr = PRIO·XREF·RMAX/r_ref gives weighted proportional fairness (one flow on
// 1 Mbit/s settles at 15 ms). The sender can also compute the signal itself from per-packet
// transport feedback (Sender.OnFeedback), as ns3-rmcat does.
//
// Simplifications, documented where they are made: the rate-shaping buffer is not modelled — the
// caller may report its size (SetShapingBuffer) and r_vin/r_send follow RFC 8698 §5.2.2, otherwise
// both equal r_ref; δ is capped at TAU so a long feedback gap cannot swing r_ref in one step; the
// warping falls back to the plain delay over one average loss interval (as ns3-rmcat) rather than
// switching abruptly; and x_curr is clipped at XMAX = 500 ms (ns3-rmcat).
//
// RMAX is the application's maximum (WithRMax). Left unset, r_ref is not capped at RFC 8698's
// example 1.5 Mbit/s but the equilibrium keeps 1.5 Mbit/s as its reference, so NADA holds the
// RFC's delay at every rate and can still follow a link above 1.5 Mbit/s (RFC 8867 5.1 steps to
// 2.5 Mbit/s). Seed 004 reports NADA taking ~17 % of a 10 Mbit/s link against NewReno; with RMAX
// set to 1.5 Mbit/s, as there, that is a cap artefact (1.5/10 ≈ 15 %).
package nada
