package e2e

import (
	"fmt"
	"time"
)

// videoStats is the receiving side's inbound-rtp video entry, as getStats reports it.
type videoStats struct {
	FramesDecoded int     `json:"framesDecoded"`
	FrameWidth    int     `json:"frameWidth"`
	FrameHeight   int     `json:"frameHeight"`
	BytesReceived float64 `json:"bytesReceived"`
	Codec         string  `json:"codec"`
}

// inboundVideoJS reads the inbound video stats of the PeerConnection that pcExpr evaluates to;
// it yields null until such an entry exists.
const inboundVideoJS = `(async () => {
  const pc = %s;
  if (!pc) return null;
  const report = await pc.getStats();
  let v = null;
  report.forEach((s) => { if (s.type === 'inbound-rtp' && s.kind === 'video') v = s; });
  if (!v) return null;
  const codec = v.codecId && report.get(v.codecId);
  return { framesDecoded: v.framesDecoded || 0, frameWidth: v.frameWidth || 0, frameHeight: v.frameHeight || 0,
           bytesReceived: v.bytesReceived || 0, codec: codec ? codec.mimeType : '' };
})()`

func readInboundVideo(b *browser, pcExpr string) (*videoStats, error) {
	return eval[*videoStats](b, fmt.Sprintf(inboundVideoJS, pcExpr))
}

// requireEchoedVideo waits until the browser has decoded more than minFrames frames of the video the
// server sent back, with a real resolution, and then checks that decoding keeps going.
func requireEchoedVideo(b *browser, pcExpr string, timeout time.Duration) videoStats {
	b.t.Helper()
	return requireDecodedVideo(b, pcExpr, "echoed video", timeout)
}

// requireDecodedVideo waits until the browser has decoded more than minFrames frames of the video
// that the PeerConnection pcExpr receives, with a real resolution, and then checks that decoding
// keeps going; what names the video in messages.
func requireDecodedVideo(b *browser, pcExpr, what string, timeout time.Duration) videoStats {
	b.t.Helper()
	const minFrames = 10
	start := time.Now()
	var first *videoStats
	for {
		v, err := readInboundVideo(b, pcExpr)
		if err == nil && v != nil && v.FramesDecoded > minFrames && v.FrameWidth > 0 {
			first = v
			break
		}
		if time.Since(start) > timeout {
			b.t.Fatalf("no %s decoded within %v: last inbound-rtp video %+v (err %v)", what, timeout, v, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.t.Logf("%s: %d frames decoded, %dx%d %s, %v after the wait started",
		what, first.FramesDecoded, first.FrameWidth, first.FrameHeight, first.Codec, time.Since(start).Round(time.Millisecond))

	// The fake camera runs at 20 fps; over 1.5 s at least a handful of new frames must arrive.
	time.Sleep(1500 * time.Millisecond)
	second, err := readInboundVideo(b, pcExpr)
	if err != nil || second == nil {
		b.t.Fatalf("reading inbound video stats again: %v", err)
	}
	if second.FramesDecoded < first.FramesDecoded+5 {
		b.t.Fatalf("%s stalled: framesDecoded %d then %d 1.5 s later", what, first.FramesDecoded, second.FramesDecoded)
	}
	if second.BytesReceived <= first.BytesReceived {
		b.t.Fatalf("%s: no bytes received in 1.5 s (%v then %v)", what, first.BytesReceived, second.BytesReceived)
	}
	return *second
}

// mixPowerJS is the mean power of the audio that the PeerConnection %[1]s receives over %[2]d ms:
// the growth of getStats' totalAudioEnergy (the sum of audioLevel² × duration) over the growth of
// totalSamplesDuration; -1 while nothing is decoded.
const mixPowerJS = `(async () => {
	const sample = async () => {
		const pc = %[1]s;
		if (!pc) return null;
		let a = null;
		(await pc.getStats()).forEach((s) => { if (s.type === 'inbound-rtp' && s.kind === 'audio') a = s; });
		return a && { energy: a.totalAudioEnergy || 0, duration: a.totalSamplesDuration || 0 };
	};
	const a = await sample();
	await new Promise((r) => setTimeout(r, %[2]d));
	const b = await sample();
	if (!a || !b || b.duration <= a.duration) return -1;
	return (b.energy - a.energy) / (b.duration - a.duration);
})()`

// requireMixEnergy waits until the PeerConnection pcExpr decodes received audio with energy (loud)
// or without (silent), measured over one-second windows: Chromium's fake microphone beeps several
// times a second, so a window with another participant's beep in it has a mean power of 0.1 to
// 0.25 (audioLevel is 0..1), and a silent mix one below 1e-4.
func requireMixEnergy(b *browser, pcExpr, what string, loud bool) {
	b.t.Helper()
	const (
		loudPower   = 0.01
		silentPower = 0.001
		window      = 1000 // ms
	)
	start := time.Now()
	var powers []float64
	for time.Since(start) < 10*time.Second {
		p, err := eval[float64](b, fmt.Sprintf(mixPowerJS, pcExpr, window))
		if err != nil {
			b.t.Fatalf("%s: reading getStats: %v", what, err)
		}
		powers = append(powers, p)
		if (loud && p > loudPower) || (!loud && p >= 0 && p < silentPower) {
			b.t.Logf("%s: mean power %.3g over 1 s, %v after the wait started", what, p, time.Since(start).Round(time.Millisecond))
			return
		}
	}
	want := fmt.Sprintf("above %g", loudPower)
	if !loud {
		want = fmt.Sprintf("below %g", silentPower)
	}
	b.t.Fatalf("%s: the mean power over 1 s windows was %.3g for 10 s, want %s", what, powers, want)
}
