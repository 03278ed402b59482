package audio

import (
	"math"
	"testing"

	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
)

const levelExtID = 1

// rtpPackets wraps payloads in RTP packets of one stream, frameTS apart, each carrying the audio
// level extension (as a browser sends them).
func rtpPackets(t testing.TB, payloads [][]byte, pt uint8, frameTS uint32, level byte) [][]byte {
	t.Helper()
	out := make([][]byte, len(payloads))
	for i, pl := range payloads {
		p := rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: pt, SequenceNumber: uint16(1000 + i),
			Timestamp: 5000 + uint32(i)*frameTS, SSRC: 42}, Payload: pl}
		if err := p.SetExtension(levelExtID, []byte{0x80 | level}); err != nil {
			t.Fatal(err)
		}
		b, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// sinkRig is a real receiver feeding one participant's input through a Sink.
type sinkRig struct {
	recv  *sfu.Receiver
	in    *Input
	sink  *Sink
	talks []bool
	heard []int16
}

func newSinkRig(t testing.TB, c media.Codec, f Format, prebuffer int) *sinkRig {
	t.Helper()
	r := &sinkRig{recv: sfu.NewReceiver(sfu.ReceiverConfig{Codec: c, Extensions: sfu.ExtIDs{AudioLevel: levelExtID}}, nil)}
	var err error
	if r.in, err = NewCodecInput(c, f, prebuffer); err != nil {
		t.Fatal(err)
	}
	r.sink, err = NewSink(r.recv, r.in, SinkConfig{AudioActivePackets: 10, PayloadType: AnyPayloadType, OnTalk: func(on bool) { r.talks = append(r.talks, on) }})
	if err != nil {
		t.Fatal(err)
	}
	r.recv.AddSink(r.sink)
	return r
}

// play writes each packet to the receiver and ticks the input once per packet, keeping what it
// yields.
func (r *sinkRig) play(pkts [][]byte) {
	for _, p := range pkts {
		r.recv.WriteRTP(0, p, 0)
		if pcm := r.in.Next(); pcm != nil {
			r.heard = append(r.heard, pcm...)
		}
	}
}

// An Opus track published to a real Receiver reaches the participant's input through the sink:
// the input yields the tone the publisher encoded, and its audio levels drive talking detection.
func TestSinkFeedsOpusFromAReceiverAndDetectsTalking(t *testing.T) {
	room := Format{Rate: 16000, Channels: 1}
	r := newSinkRig(t, media.CodecOpus, room, 2)
	pkts := rtpPackets(t, toneFrames(t, upFormat, EncoderConfig{}, 440, 50), 111, 960, 10)
	r.play(pkts)
	if r.sink.Levels() != 50 {
		t.Fatalf("read %d audio levels, want 50", r.sink.Levels())
	}
	tail := r.heard[len(r.heard)-20*room.Samples():]
	if on, off := ToneLevel(tail, 1, 0, room.Rate, 440), ToneLevel(tail, 1, 0, room.Rate, 1000); on < 0.15 || off > 0.02 {
		t.Fatalf("tone level %.3f at 440 Hz (want > 0.15), %.3f at 1000 Hz (want < 0.02)", on, off)
	}
	if len(r.talks) != 1 || !r.talks[0] || !r.sink.Talking() {
		t.Fatalf("talking events %v, want [true]", r.talks)
	}
}

// A moderator's mute and unmute resync the sink: the input prebuffers again (a resumed stream
// does not follow the old one), and the participant stops talking until its levels say otherwise.
func TestSinkResyncOnUnmute(t *testing.T) {
	room := Format{Rate: 16000, Channels: 1}
	r := newSinkRig(t, media.CodecOpus, room, 2)
	pkts := rtpPackets(t, toneFrames(t, upFormat, EncoderConfig{}, 440, 40), 111, 960, 10)
	r.play(pkts[:20])
	r.recv.SetMuted(true)
	r.recv.SetMuted(false)
	r.recv.WriteRTP(0, pkts[20], 0) // in flight at the unmute: the resync acts on it
	if len(r.talks) != 2 || r.talks[1] {
		t.Fatalf("talking events %v after the resync, want [true false]", r.talks)
	}
	if pcm := r.in.Next(); pcm != nil {
		t.Fatal("the input played the old stream after a resync")
	}
	if st := r.in.Stats(); st.Jitter.Queued != 21 {
		t.Fatalf("queued %d packets, want 21", st.Jitter.Queued)
	}
	// The stream resumes 1000 packets later, silent by its levels.
	quiet := rtpPackets(t, toneFrames(t, upFormat, EncoderConfig{}, 440, 20), 111, 960, 127)
	for i, p := range quiet {
		media.SetSeq(p, 3000+uint16(i))
	}
	r.heard = r.heard[:0]
	r.play(quiet)
	if want := []bool{true, false}; len(r.talks) != 2 || r.talks[0] != want[0] || r.talks[1] != want[1] {
		t.Fatalf("talking events %v, want %v", r.talks, want)
	}
	if r.sink.Talking() {
		t.Fatal("still talking after the resync and silent levels")
	}
	if len(r.heard) == 0 || ToneLevel(r.heard, 1, 0, room.Rate, 440) < 0.1 {
		t.Fatal("the resumed stream did not reach the input")
	}
	if r.in.Stats().Corrupt != 0 {
		t.Fatalf("%d corrupt frames", r.in.Stats().Corrupt)
	}
}

func TestSinkRefusesAnotherCodec(t *testing.T) {
	recv := sfu.NewReceiver(sfu.ReceiverConfig{Codec: media.CodecPCMU}, nil)
	in, err := NewInput(Format{Rate: 16000, Channels: 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSink(recv, in, SinkConfig{}); err == nil {
		t.Fatal("a PCMU track was accepted by an Opus input")
	}
	if _, err := NewCodecInput(media.CodecVP8, Format{Rate: 16000, Channels: 1}, 2); err == nil {
		t.Fatal("a VP8 input was created")
	}
}

// Without the audio level extension the sink feeds the input and detects nothing.
func TestSinkWithoutAudioLevels(t *testing.T) {
	recv := sfu.NewReceiver(sfu.ReceiverConfig{Codec: media.CodecOpus}, nil)
	in, err := NewInput(Format{Rate: 48000, Channels: 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSink(recv, in, SinkConfig{PayloadType: AnyPayloadType})
	if err != nil {
		t.Fatal(err)
	}
	recv.AddSink(s)
	for _, p := range rtpPackets(t, toneFrames(t, upFormat, EncoderConfig{}, 440, 3), 111, 960, 0) {
		recv.WriteRTP(0, p, 0)
	}
	if s.Levels() != 0 || in.Stats().Jitter.Queued != 3 {
		t.Fatalf("levels %d (want 0), queued %d (want 3)", s.Levels(), in.Stats().Jitter.Queued)
	}
}

// A G.711 participant's packets, from a real Receiver through the sink, reach a 16 kHz stereo
// room with the tone in both channels at its level, for both laws.
func TestSinkFeedsG711IntoAWidebandRoom(t *testing.T) {
	room := Format{Rate: 16000, Channels: 2}
	for _, tc := range []struct {
		codec media.Codec
		law   Law
		pt    uint8
	}{{media.CodecPCMU, ULaw, 0}, {media.CodecPCMA, ALaw, 8}} {
		r := newSinkRig(t, tc.codec, room, 2)
		r.play(rtpPackets(t, g711ToneFrames(t, tc.law, 440, 40), tc.pt, 160, 10))
		tail := r.heard[len(r.heard)-20*room.FrameLen():]
		for ch := range 2 {
			on, off := ToneLevel(tail, 2, ch, room.Rate, 440), ToneLevel(tail, 2, ch, room.Rate, 1000)
			if math.Abs(on-8000.0/32768) > 0.1*8000/32768 || off > 0.01 {
				t.Errorf("%s channel %d: 440 Hz at %.4f, 1000 Hz at %.4f", tc.codec, ch, on, off)
			}
		}
		if len(r.talks) != 1 || !r.talks[0] {
			t.Errorf("%s: talking events %v, want [true]", tc.codec, r.talks)
		}
	}
}

// sinkLoop replays a participant's packets through a receiver, its sink and its input, renumbered
// so that the stream stays valid, one mixer tick per packet, into a 16 kHz stereo room.
type sinkLoop struct {
	*sinkRig
	pkts    [][]byte
	frameTS uint32
	seq     uint16
	ts      uint32
	next    int
	played  int
}

func newSinkLoop(t testing.TB, c media.Codec) *sinkLoop {
	var payloads [][]byte
	frameTS := c.ClockRate() * FrameMs / 1000
	if c == media.CodecOpus {
		payloads = toneFrames(t, upFormat, EncoderConfig{}, 440, 50)
	} else {
		payloads = g711ToneFrames(t, ALaw, 440, 50)
	}
	return &sinkLoop{sinkRig: newSinkRig(t, c, Format{Rate: 16000, Channels: 2}, 2),
		pkts: rtpPackets(t, payloads, 0, frameTS, 10), frameTS: frameTS, seq: 1000, ts: 5000}
}

func (l *sinkLoop) step() {
	p := l.pkts[l.next%len(l.pkts)]
	media.SetSeq(p, l.seq)
	media.SetTimestamp(p, l.ts)
	l.seq, l.ts, l.next = l.seq+1, l.ts+l.frameTS, l.next+1
	l.recv.WriteRTP(0, p, 0)
	if l.in.Next() != nil {
		l.played++
	}
}

// BenchmarkSinkPacket is one participant's packet from the receiver to a decoded frame of a
// 16 kHz stereo room: Opus (libopus decode) and G.711 (table decode, 8 → 16 kHz).
func BenchmarkSinkPacket(b *testing.B) {
	for _, c := range []media.Codec{media.CodecOpus, media.CodecPCMA} {
		b.Run(c.String(), func(b *testing.B) {
			l := newSinkLoop(b, c)
			b.ReportAllocs()
			for b.Loop() {
				l.step()
			}
		})
	}
}

// Packets of another payload type than the negotiated one never reach the input: a participant
// switching to a codec the mix would decode as the wrong one is dropped and counted.
func TestSinkDropsOtherPayloadTypes(t *testing.T) {
	recv := sfu.NewReceiver(sfu.ReceiverConfig{Codec: media.CodecOpus}, nil)
	in, err := NewInput(Format{Rate: 48000, Channels: 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSink(recv, in, SinkConfig{PayloadType: 111})
	if err != nil {
		t.Fatal(err)
	}
	recv.AddSink(s)
	frames := toneFrames(t, upFormat, EncoderConfig{}, 440, 6)
	for i, p := range rtpPackets(t, frames, 111, 960, 0) {
		if i >= 3 {
			p[1] &^= 0x7f // payload type 0 (PCMU)
		}
		recv.WriteRTP(0, p, 0)
	}
	if q := in.Stats().Jitter.Queued; q != 3 || s.WrongPayloadType() != 3 {
		t.Fatalf("queued %d, dropped %d: want the 3 packets of type 111 queued and the 3 others dropped", q, s.WrongPayloadType())
	}
}
