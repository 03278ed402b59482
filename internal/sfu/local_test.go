package sfu

import (
	"testing"

	"github.com/strata-rtc/strata/internal/media"
)

// recordingSink keeps the headers it was handed.
type recordingSink struct{ got []media.Header }

func (r *recordingSink) WriteRTP(p *Packet) { r.got = append(r.got, p.Header) }
func (r *recordingSink) Resync()            {}

// A LocalSource numbers frames into RTP its sinks see as any publisher's packets: consecutive
// sequence numbers, the given timestamps, its SSRC and payload type; an oversized payload is
// dropped and counted; writing allocates nothing.
func TestLocalSourceNumbersFrames(t *testing.T) {
	src := NewLocalSource(ReceiverConfig{Codec: media.CodecOpus}, 0xabcd, 111)
	sink := &recordingSink{}
	src.Receiver().AddSink(sink)
	payload := []byte{0xfc, 1, 2, 3}
	for i := range 3 {
		src.Write(payload, uint32(i*960), false, 0)
	}
	src.Write(make([]byte, media.SlotSize), 4*960, false, 0)
	if len(sink.got) != 3 {
		t.Fatalf("sink got %d packets, want 3", len(sink.got))
	}
	for i, h := range sink.got {
		if h.Seq != sink.got[0].Seq+uint16(i) || h.Timestamp != uint32(i*960) || h.SSRC != 0xabcd || h.PayloadType != 111 {
			t.Errorf("packet %d: %+v", i, h)
		}
	}
	if st := src.Receiver().Stats(); st.MalformedRTP != 1 || st.Packets != 3 {
		t.Errorf("receiver stats %+v: want 3 packets and the oversized one counted", st)
	}
	src.Receiver().RemoveSink(sink)
	ts := uint32(0)
	if n := testing.AllocsPerRun(100, func() { ts += 960; src.Write(payload, ts, false, 0) }); n != 0 {
		t.Errorf("Write allocates %.1f times per frame", n)
	}
}
