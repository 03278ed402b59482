package cc

// Usage is the verdict of a delay-based over-use detector.
type Usage int8

// Detector verdicts.
const (
	Normal Usage = iota
	Overuse
	Underuse
)

var usageNames = [...]string{"normal", "overuse", "underuse"}

// String returns "normal", "overuse" or "underuse".
func (u Usage) String() string {
	if int(u) < 0 || int(u) >= len(usageNames) {
		return "unknown"
	}
	return usageNames[u]
}

// MarshalText makes Usage appear as its name in JSON.
func (u Usage) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// State is a snapshot of a controller for display (the admin API's handle_info) and logs. Fields a
// controller does not have stay zero and are omitted from JSON.
type State struct {
	// Algorithm names the controller, e.g. "gcc", "gcc-draft", "nada", "ledbat", "cubic".
	Algorithm string `json:"algorithm"`
	// Target is the target (encoder) rate of a rate controller, or the REMB value of a receiver.
	Target Bitrate `json:"target_bps,omitempty"`
	// Pacing is the pacing rate.
	Pacing Bitrate `json:"pacing_bps,omitempty"`
	// Received is the measured received or acknowledged rate.
	Received Bitrate `json:"received_bps,omitempty"`
	// DelayBased and LossBased are GCC's two partial estimates.
	DelayBased Bitrate `json:"delay_based_bps,omitempty"`
	LossBased  Bitrate `json:"loss_based_bps,omitempty"`
	// Cwnd and Ssthresh are a window controller's window and slow-start threshold, in bytes.
	Cwnd     int `json:"cwnd_bytes,omitempty"`
	Ssthresh int `json:"ssthresh_bytes,omitempty"`
	// Usage is a delay detector's verdict.
	Usage Usage `json:"usage"`
	// DelayGradientMs is GCC's delay-gradient estimate as compared to the threshold: the Kalman
	// offset m(i) (draft) or the modified trendline slope (libwebrtc), scaled as the detector uses
	// it; ThresholdMs is the adaptive threshold γ.
	DelayGradientMs float64 `json:"delay_gradient_ms,omitempty"`
	ThresholdMs     float64 `json:"threshold_ms,omitempty"`
	// QueueDelayMs is the estimated queuing delay (NADA, LEDBAT).
	QueueDelayMs float64 `json:"queue_delay_ms,omitempty"`
	// SignalMs is NADA's aggregate congestion signal x_curr.
	SignalMs float64 `json:"signal_ms,omitempty"`
	// LossRate is the recent packet-loss fraction.
	LossRate float64 `json:"loss_rate,omitempty"`
	// RTTMs is the smoothed RTT the controller uses.
	RTTMs float64 `json:"rtt_ms,omitempty"`
	// Phase is the controller's mode: "increase"/"hold"/"decrease" (GCC), "accelerated"/"gradual"
	// (NADA), "slow-start"/"congestion-avoidance"/"recovery"/"slowdown" (window controllers).
	Phase string `json:"phase,omitempty"`
	// Probe describes probing: "", "waiting", "probing", "done".
	Probe string `json:"probe,omitempty"`
	// ALR reports that the sender is application-limited.
	ALR bool `json:"alr,omitempty"`
}
