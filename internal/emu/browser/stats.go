package browser

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/strata-rtc/strata/internal/emu/endpoint"
)

// pageStats is what the page's flow.stats() returns: cumulative counters of the video stream
// and the selected candidate pair's estimates. Absent members stay zero.
type pageStats struct {
	State    string  `json:"state"`
	Sent     float64 `json:"sent"`    // outbound-rtp bytesSent (payload)
	HdrSent  float64 `json:"hdrSent"` // outbound-rtp headerBytesSent
	PktsSent float64 `json:"pktsSent"`
	Target   float64 `json:"target"` // outbound-rtp targetBitrate (the encoder's)
	Recv     float64 `json:"recv"`   // inbound-rtp bytesReceived less retransmitted and FEC bytes: new payload
	PktsRecv float64 `json:"pktsRecv"`
	Lost     float64 `json:"lost"`
	Avail    float64 `json:"avail"` // candidate-pair availableOutgoingBitrate: GCC's estimate
	RTT      float64 `json:"rtt"`   // candidate-pair currentRoundTripTime, seconds
	RTTN     float64 `json:"rttN"`  // candidate-pair responsesReceived: a new RTT sample when it grows
	// What limited the encoder (none, bandwidth, cpu), for how long (s), and what it made.
	QL     string             `json:"ql"`
	QLD    map[string]float64 `json:"qld"`
	Width  float64            `json:"w"`
	Height float64            `json:"h"`
	Frames float64            `json:"frames"`
}

// summary is the sender's last state in one line for the run's log: a flow whose encoder was
// limited by the CPU measured the machine, not the network.
func (s *sampler) summary(ctx context.Context) string {
	snd, err := evalJS[pageStats](ctx, s.sender, `flow.stats()`)
	if err != nil {
		return fmt.Sprintf("%s: final getStats: %v", s.who, err)
	}
	return fmt.Sprintf("%s: sent %.0f bytes of video in %.0f packets, %.0f frames, last %.0fx%.0f; encoder limited by %q, durations %v s",
		s.who, snd.Sent, snd.PktsSent, snd.Frames, snd.Width, snd.Height, snd.QL, snd.QLD)
}

// sampler reads both ends every interval and feeds the recorder.
type sampler struct {
	rec      endpoint.Recorder
	log      io.Writer
	who      string
	sender   *chromium
	receiver *chromium // nil with the echotest
	echo     *echotest // nil with a receiving browser

	delivered float64 // payload bytes the receiver had at the last sample
	rttN      float64
	failed    bool
}

// received is the receiver's cumulative payload bytes: the receiving browser's inbound-rtp
// bytesReceived, or strata's count for the echotest (see echotest.received). hdr is the sender's
// mean RTP header size, for the latter.
func (s *sampler) received(ctx context.Context, snd pageStats) (float64, error) {
	if s.echo != nil {
		hdr := 0.0
		if snd.PktsSent > 0 {
			hdr = snd.HdrSent / snd.PktsSent
		}
		return s.echo.received(ctx, hdr)
	}
	r, err := evalJS[pageStats](ctx, s.receiver, `flow.stats()`)
	return r.Recv, err
}

// waitMedia returns once the receiver has payload bytes, or fails after the context's end.
func (s *sampler) waitMedia(ctx context.Context) error {
	for {
		snd, err := evalJS[pageStats](ctx, s.sender, `flow.stats()`)
		if err == nil && snd.State == "failed" {
			return fmt.Errorf("the sender's PeerConnection failed (ICE or DTLS)")
		}
		var got float64
		if err == nil {
			got, err = s.received(ctx, snd)
		}
		if err == nil && got > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no media at the receiver (sender: %+v, last error: %v): %w", snd, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// run samples every interval until ctx ends; the first sample's payload counts from zero, so
// the bytes delivered before Start returned are recorded too.
func (s *sampler) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s.sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *sampler) sample(ctx context.Context) {
	snd, err := evalJS[pageStats](ctx, s.sender, `flow.stats()`)
	var got float64
	if err == nil {
		got, err = s.received(ctx, snd)
	}
	if err != nil {
		if ctx.Err() == nil && !s.failed {
			s.failed = true // once: a browser that died keeps failing
			fmt.Fprintf(s.log, "%s: getStats: %v\n", s.who, err)
		}
		return
	}
	if snd.Avail > 0 {
		s.rec.Target(snd.Avail)
	}
	if snd.RTTN > s.rttN && snd.RTT > 0 {
		s.rec.RTT(time.Duration(snd.RTT * float64(time.Second)))
	}
	s.rttN = snd.RTTN
	if d := got - s.delivered; d > 0 {
		s.rec.Goodput(int(d))
		s.delivered = got
	}
}
