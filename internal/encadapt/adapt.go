// Package encadapt is libwebrtc's encoder adaptation for one VP8 camera stream, as Chromium runs
// it around LibvpxVp8Encoder, without a clock: every call takes the time as an argument, so tests
// drive it with synthetic QP and frame-size sequences and the emulated sender with its captures'
// times. It decides, per captured frame, whether to drop the frame for its size, at which
// resolution to encode it and which bitrate to give the encoder.
//
// What it follows in libwebrtc (read in its source; no code copied):
//
//   - Degradation preference. WebRtcVideoSendStream::GetDegradationPreference gives a camera track
//     without a content hint MAINTAIN_FRAMERATE (BALANCED only under the
//     WebRTC-Video-BalancedDegradation field trial): quality problems cost resolution, never
//     frame rate.
//   - QualityScaler (modules/video_coding/utility/quality_scaler.cc) with the defaults of
//     QualityScalingExperiment (rtc_base/experiments/quality_scaling_experiment.cc), which is on
//     unless disabled on every platform but iOS: "Enabled-29,95,...,0.9995,0.9999,1", i.e. VP8
//     thresholds low 29 and high 95 on the 0–127 QP scale (the same as LibvpxVp8Encoder's
//     kLowVp8QpThreshold and kHighVp8QpThreshold), QP smoothed by two exponential filters whose
//     per-millisecond factors are 0.9995 (the high-QP test) and 0.9999 (the low-QP test), and
//     every drop reason counted. A check runs 2 s after start and every 2 s until the first
//     adaptation down ("fast ramp-up"); after that every 1 s while the previous check saw too
//     few frames and every 5 s (2 s × 2.5) otherwise. A check needs 60 frames (encoded or
//     dropped) since the last adaptation; it adapts down when at least 60 % of the last 150 were
//     dropped or the high-QP average exceeds 95, up when the low-QP average is at most 29; either
//     clears the samples. The gap between the thresholds, the cleared samples and the slower
//     checks after a step down are libwebrtc's only hysteresis.
//   - VideoStreamAdapter (call/adaptation/video_stream_adapter.cc): a step down asks for at most
//     3/5 of the current pixels and is refused when that is under the encoder's minimum of
//     320×180 pixels (ScalingSettings' kDefaultMinPixelsPerFrame); a step up asks for 5/3 of
//     them with a ceiling of 12/5 of that, and the last step up lifts every restriction.
//   - VideoAdapter (media/base/video_adapter.cc): the output is the capture scaled by the
//     fraction, among 1, 3/4, 1/2, 3/8, 1/4, 3/16, … (alternately ×3/4 and ×2/3), whose pixel
//     count is nearest the request without exceeding its ceiling: for 1280×720 the ladder is
//     960×540, 640×360, 480×270, 320×180.
//   - Initial frame dropping (VideoStreamEncoder::DropDueToSize and the resource manager's
//     InitialFrameDropper): while the quality scaler runs and no frame has yet been encoded, a
//     frame larger than the start bitrate suits (above 320×240 under 300 kbit/s, above 640×480
//     under 500 kbit/s) is dropped and the resolution steps down, for at most 4 frames.
//     libwebrtc decides it with the start bitrate SetStartBitrate gave, the estimator's start
//     before any overhead is deducted, so Config.StartRate is that rate.
//   - EncoderBitrateAdjuster and EncoderOvershootDetector (video/encoder_bitrate_adjuster.cc,
//     video/encoder_overshoot_detector.cc), on by default (RateControlSettings'
//     bitrate_adjuster and adjuster_use_headroom are true): see overshoot.go.
//
// Not followed: resolution bitrate limits for adapting up (BitrateConstraint) apply only when
// the encoder reports resolution_bitrate_limits, which LibvpxVp8Encoder does only under a field
// trial; CPU-overuse adaptation (the lab's machine is not the thing measured); BALANCED's frame
// rate steps.
package encadapt

import "time"

// Config is one stream's adaptation.
type Config struct {
	Width, Height int     // the capture's size, which is also the largest the stream sends
	FPS           float64 // the capture's frame rate
	StartRate     float64 // the encoder's start bitrate (bit/s): decides the initial drops
	MinRate       float64 // the codec's minimum bitrate (bit/s), which the adjuster keeps
	Scale         bool    // resolution adaptation: the quality scaler and the initial drops
	Adjust        bool    // the bitrate adjuster (overshoot correction)
}

// Frame is the decision for one captured frame.
type Frame struct {
	Drop          bool // dropped before encoding, for its size (the initial frame dropper)
	Width, Height int  // the resolution to encode at
	Rate          float64
	// Resized is set on the first frame at a new resolution; Reason then says why ("initial
	// drop", "high QP", "frame drops" or "low QP") and QP is the smoothed QP that decided it.
	Resized bool
	Reason  string
	QP      int
}

// Adapter is the adaptation of one stream. It is not safe for concurrent use.
type Adapter struct {
	cfg      Config
	scaler   qualityScaler
	ladder   ladder
	adjust   adjuster
	initial  int  // initial frame drops left
	started  bool // the first frame came: the quality scaler's clock runs from it
	encoding bool // a frame has passed to the encoder
	w, h     int
	resized  bool   // a resolution change to report with the next encoded frame
	reason   string // its reason and QP
	qp       int
}

// MaxInitialDrops is libwebrtc's kMaxInitialFramedrop.
const MaxInitialDrops = 4

// New returns the adapter for a stream; its quality checks count from its first frame, as
// libwebrtc starts the quality scaler when the first frame configures the encoder.
func New(cfg Config) *Adapter {
	a := &Adapter{cfg: cfg, w: cfg.Width, h: cfg.Height}
	a.ladder = newLadder(cfg.Width, cfg.Height)
	a.scaler = newQualityScaler(0)
	a.adjust = newAdjuster(cfg.MinRate)
	if cfg.Scale {
		a.initial = MaxInitialDrops
	}
	return a
}

// Size is the resolution the stream encodes at now.
func (a *Adapter) Size() (width, height int) { return a.w, a.h }

// OnFrame decides what becomes of the frame captured at now, when the controller's target for the
// encoder is target and its whole allocation link (bit/s; link ≥ target, more when the target is
// capped by the stream's maximum).
func (a *Adapter) OnFrame(now time.Duration, target, link float64) Frame {
	if !a.started {
		a.started, a.scaler = true, newQualityScaler(now)
	}
	if a.cfg.Scale {
		for a.scaler.due(now) {
			switch a.scaler.check(now) {
			case qpHigh:
				a.step(false, a.scaler.lastReason, a.scaler.lastQP)
			case qpLow:
				a.step(true, "low QP", a.scaler.lastQP)
			}
		}
		if !a.encoding && a.initial > 0 && dropForSize(a.w*a.h, a.cfg.StartRate) {
			a.initial--
			a.step(false, "initial drop", -1)
			return Frame{Drop: true, Width: a.w, Height: a.h}
		}
	}
	a.encoding = true
	f := Frame{Width: a.w, Height: a.h, Rate: target}
	if a.resized {
		f.Resized, f.Reason, f.QP = true, a.reason, a.qp
		a.resized = false
	}
	if a.cfg.Adjust {
		f.Rate = a.adjust.rate(now, target, link, a.cfg.FPS)
	}
	return f
}

// step adapts the resolution one step down or up, if the limits allow; a change restarts the
// bitrate adjuster, as libwebrtc's encoder reconfiguration creates a new one.
func (a *Adapter) step(up bool, reason string, qp int) {
	var ok bool
	if up {
		ok = a.ladder.up(a.w * a.h)
	} else {
		ok = a.ladder.down(a.w * a.h)
	}
	if !ok {
		return
	}
	w, h := a.ladder.size()
	if w == a.w && h == a.h {
		return
	}
	a.w, a.h = w, h
	a.resized, a.reason, a.qp = true, reason, qp
	a.adjust = newAdjuster(a.cfg.MinRate)
}

// OnEncoded reports the frame encoded at now: its size in bytes and its QP (0–127).
func (a *Adapter) OnEncoded(now time.Duration, bytes, qp int) {
	a.scaler.encoded(now, qp)
	a.adjust.encoded(now, bytes)
}

// OnDropped reports a frame the encoder's rate control dropped.
func (a *Adapter) OnDropped() { a.scaler.dropped() }

// QP is the smoothed QP the quality scaler's high and low tests would read now (-1: no frame
// since the last adaptation).
func (a *Adapter) QP() (high, low int) {
	if a.scaler.high.empty {
		return -1, -1
	}
	return a.scaler.high.average(), a.scaler.low.average()
}

// Factor is the adjuster's last utilisation factor (target over the rate given to the encoder).
func (a *Adapter) Factor() float64 { return a.adjust.factor }

// dropForSize is DropDueToSize's default rule for an encoder without resolution bitrate limits.
func dropForSize(pixels int, bps float64) bool {
	switch {
	case bps < 300e3:
		return pixels > 320*240
	case bps < 500e3:
		return pixels > 640*480
	}
	return false
}
