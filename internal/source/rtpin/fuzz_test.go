package rtpin

import (
	"testing"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu"
	"github.com/strata-rtc/strata/internal/source"
)

// FuzzHandle feeds arbitrary datagrams to a stream's handler, as a sender on the network can: RTP
// or RTCP classification, SSRC learning and the receiver must never panic, and every datagram is
// either RTCP, a delivered or dropped packet, or counted as malformed.
func FuzzHandle(f *testing.F) {
	buf := make([]byte, 64)
	f.Add(vp8Packet(buf, 1, 7, true))
	f.Add(opusPacket(make([]byte, 64), 2, 9))
	f.Add([]byte{0x80, 200, 0, 6, 0, 0, 0, 1, 0, 0, 0, 0})
	f.Add([]byte{0x90, 100, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xbe, 0xde, 0, 1, 0x10, 0xff, 0, 0})
	f.Add([]byte{0xa0, 100, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xff})
	f.Add([]byte{})
	s, err := Open(Config{Host: "127.0.0.1", Streams: []Stream{
		{Kind: source.Video, MID: "v8", Codec: media.CodecVP8, Simulcast: true},
		{Kind: source.Video, MID: "v9", Codec: media.CodecVP9},
		{Kind: source.Video, MID: "h", Codec: media.CodecH264},
		{Kind: source.Video, MID: "av1", Codec: media.CodecAV1},
	}}, sfu.ReceiverConfig{})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	from := to(9)
	f.Fuzz(func(t *testing.T, pkt []byte) {
		for _, st := range s.streams {
			layer := 0
			if len(pkt) > 0 && st.cfg.Simulcast {
				layer = int(pkt[len(pkt)-1]) % 3
			}
			before := st.recv.Stats()
			rtcpBefore := st.rtcpIn.Load()
			st.handle(layer, pkt, from, sfu.Now())
			after := st.recv.Stats()
			counted := after.Packets - before.Packets + after.MalformedRTP - before.MalformedRTP +
				after.MalformedPayload - before.MalformedPayload + after.Duplicates - before.Duplicates +
				st.rtcpIn.Load() - rtcpBefore
			if counted != 1 {
				t.Fatalf("%s: datagram %x counted %d times", st.cfg.MID, pkt, counted)
			}
		}
	})
}
