package bwe

import (
	"testing"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/interceptor/pkg/twcc"
	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/gcc"
)

// feedbackFor builds the TWCC feedback a receiver would send for the packets [from, to) of h, each
// arriving 20 ms after it left (a path with room), and hands it to s as if read from the wire.
func feedbackFor(t *testing.T, s *SendSide, from, to int64) {
	t.Helper()
	rec := twcc.NewRecorder(1)
	for seq := from; seq < to; seq++ {
		r, ok := s.history.get(seq)
		if !ok {
			t.Fatalf("packet %d not in the history", seq)
		}
		rec.Record(7, uint16(seq), (r.sendTime + 20*time.Millisecond).Microseconds())
	}
	for _, fb := range twccViews(t, rec.BuildFeedbackPacket()) {
		s.onFeedback(&fb)
	}
}

// TestProbeClusterReachesGCC: a probe the application asks for (RequestProbe) is handed out as a
// cluster (NextProbe); the packets sent while it runs (BeginProbe … EndProbe) carry its id in the
// send history, and their feedback reaches GCC's probe-result estimator, whose result lifts the
// estimate at once to the probed rate, where AIMD alone would need seconds.
func TestProbeClusterReachesGCC(t *testing.T) {
	ctrl := gcc.NewSender(gcc.WithInitialRate(300*cc.Kbps), gcc.WithInitialProbes(0, 0), gcc.WithALRProbing(false, 0, 0))
	s := NewSendSide(ctrl, 0)
	defer s.Close()
	est := s.Estimator()
	w := s.BindLocalStream(&interceptor.StreamInfo{RTPHeaderExtensions: []interceptor.RTPHeaderExtension{{URI: TransportCCURI, ID: 5}}},
		interceptor.RTPWriterFunc(func(*rtp.Header, []byte, interceptor.Attributes) (int, error) { return 0, nil }))
	h := &rtp.Header{Version: 2, PayloadType: 96, SSRC: 1}
	payload := make([]byte, 1100)
	send := func(n int, every time.Duration) {
		for i := 0; i < n; i++ {
			h.SequenceNumber++
			if _, err := w.Write(h, payload, nil); err != nil {
				t.Fatal(err)
			}
			time.Sleep(every)
		}
	}
	// Half a second of media at about 300 kbit/s, acknowledged.
	send(15, 33*time.Millisecond)
	feedbackFor(t, s, 0, 15)
	before := est.TargetRate()

	est.RequestProbe(1500 * cc.Kbps)
	c, ok := est.NextProbe()
	if !ok || c.Rate != 1500*cc.Kbps || c.ID == 0 {
		t.Fatalf("cluster %+v, %v: want one at 1.5 Mbit/s", c, ok)
	}
	// The cluster is padding-only packets, as the allocator sends (255 bytes of RTP padding each,
	// which the packet's size must count).
	est.BeginProbe(c.ID)
	pad := &rtp.Header{Version: 2, PayloadType: 97, SSRC: 2, Padding: true, PaddingSize: 255}
	spacing := c.Rate.TimeFor(12 + 8 + 255)
	packets := 0
	start := time.Now()
	for pk, bytes := est.ProbeSent(); pk < c.MinPackets || bytes < c.MinBytes; pk, bytes = est.ProbeSent() {
		time.Sleep(time.Until(start.Add(time.Duration(packets) * spacing))) // on schedule, however long sleeps take
		pad.SequenceNumber++
		if _, err := w.Write(pad, nil, nil); err != nil {
			t.Fatal(err)
		}
		packets++
	}
	if _, bytes := est.ProbeSent(); bytes < packets*(12+255) {
		t.Fatalf("%d padding packets counted as %d bytes: the padding is left out", packets, bytes)
	}
	est.EndProbe()
	send(1, 0) // after the cluster: not tagged
	for seq := int64(15); seq < int64(15+packets); seq++ {
		if r, _ := s.history.get(seq); int(r.cluster) != c.ID {
			t.Fatalf("packet %d sent during the cluster is tagged %d, want %d", seq, r.cluster, c.ID)
		}
	}
	if r, _ := s.history.get(int64(15 + packets)); r.cluster != 0 {
		t.Fatalf("packet after EndProbe tagged %d", r.cluster)
	}
	feedbackFor(t, s, 15, int64(16+packets))
	after := est.TargetRate()
	t.Logf("estimate %v before, %v after a %d-packet cluster at %v", before, after, packets, c.Rate)
	// Sleeps stretch the spacing a little; the result is capped at the cluster's rate.
	if after < 1200*cc.Kbps || after > c.Rate {
		t.Errorf("estimate %v after the probe, want close to (and at most) %v", after, c.Rate)
	}
}

// TestRepeatedFeedbackCountsOnce: a receiver that saw a packet out of order sends feedback for the
// range from it again. Packets already reported received are not passed on twice; a packet
// reported lost is passed on once as lost and once more only if it turns out received.
func TestRepeatedFeedbackCountsOnce(t *testing.T) {
	h := newSendHistory()
	for i := int64(0); i < 10; i++ {
		h.add(i, time.Duration(i)*time.Millisecond, 1000, 0)
	}
	var out []cc.PacketResult
	for i := int64(0); i < 10; i++ {
		out = h.appendResult(out, i, time.Duration(i)*time.Millisecond, i == 4)
	}
	if len(out) != 10 {
		t.Fatalf("first report: %d results", len(out))
	}
	out = out[:0]
	for i := int64(0); i < 10; i++ { // the same again: 4 now received
		out = h.appendResult(out, i, time.Duration(i)*time.Millisecond, false)
	}
	if len(out) != 1 || out[0].SeqNo != 4 || out[0].Lost {
		t.Fatalf("repeated report gave %+v, want only packet 4, received", out)
	}
	out = h.appendResult(out[:0], 4, 0, true)
	if len(out) != 0 {
		t.Fatalf("a packet received then reported lost is passed on again: %+v", out)
	}
}

// TestPathSaysHowLongWhatWasSentWentUnanswered: Unanswered is 0 while everything sent has had
// feedback, grows from the first packet sent after the last feedback, and is 0 again once feedback
// comes.
func TestPathSaysHowLongWhatWasSentWentUnanswered(t *testing.T) {
	s := NewSendSide(gcc.NewSender(gcc.WithInitialRate(300*cc.Kbps)), 0)
	defer s.Close()
	w := s.BindLocalStream(&interceptor.StreamInfo{RTPHeaderExtensions: []interceptor.RTPHeaderExtension{{URI: TransportCCURI, ID: 5}}},
		interceptor.RTPWriterFunc(func(*rtp.Header, []byte, interceptor.Attributes) (int, error) { return 0, nil }))
	h := &rtp.Header{Version: 2, PayloadType: 111, SSRC: 1}
	send := func() {
		h.SequenceNumber++
		if _, err := w.Write(h, make([]byte, 100), nil); err != nil {
			t.Fatal(err)
		}
	}
	if u := s.Estimator().Path().Unanswered; u != 0 {
		t.Fatalf("Unanswered %v before anything was sent", u)
	}
	send()
	time.Sleep(30 * time.Millisecond)
	send()
	if u := s.Estimator().Path().Unanswered; u < 30*time.Millisecond {
		t.Fatalf("Unanswered %v 30 ms after the first unanswered packet", u)
	}
	feedbackFor(t, s, 0, 2)
	if u := s.Estimator().Path().Unanswered; u != 0 {
		t.Fatalf("Unanswered %v right after feedback", u)
	}
	sentAt := time.Now()
	send()
	time.Sleep(time.Millisecond)
	if u := s.Estimator().Path().Unanswered; u < time.Millisecond || u > time.Since(sentAt) {
		t.Fatalf("Unanswered %v %v after the packet sent after the feedback", u, time.Since(sentAt))
	}
}
