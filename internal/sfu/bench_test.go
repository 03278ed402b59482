package sfu

import (
	"fmt"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/sfu/policy"
)

// BenchmarkForward is the per-packet path of one published layer to n subscribers: parse, flags,
// cache, rate meter, then per down-track select, copy, rewrite and hand to the (counting) writer.
// ns/op is per input packet; divide by n for the cost per forwarded packet. The enforced runs
// forward every layer with marks (a switch thins), recorded in a mark table.
func BenchmarkForward(b *testing.B) {
	for _, n := range []int{1, 10} {
		for _, enforced := range []bool{false, true} {
			name := fmt.Sprintf("subscribers=%d", n)
			if enforced {
				name += "/enforced"
			}
			b.Run(name, func(b *testing.B) { benchForward(b, n, enforced) })
		}
	}
}

// benchMarks is a Marker as cheap as udpbatch.Marks (one store per packet), without importing it.
type benchMarks [1 << 14]uint64

func (m *benchMarks) Mark(ssrc uint32, seq uint16, dscp uint8) {
	m[(uint32(seq)^ssrc)&(1<<14-1)] = uint64(ssrc)<<32 | uint64(seq)<<16 | uint64(dscp)
}

func benchForward(b *testing.B, n int, enforced bool) {
	recv := NewReceiver(ReceiverConfig{Codec: media.CodecVP8, Simulcast: true}, nil)
	marks := &benchMarks{}
	for range n {
		cfg := DownTrackConfig{ID: "v", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}}
		if enforced {
			cfg.Marker = marks
		}
		d := NewDownTrack(recv, cfg)
		if _, err := d.Bind(&fakeBinding{}); err != nil {
			b.Fatal(err)
		}
		d.SetTarget(lay(0, 2))
		if enforced {
			m, _ := MarkLadder(recv, []Layer{lay(0, 0), lay(0, 1), lay(0, 2)}, []uint8{34, 36, 38})
			d.SetMarks(m)
			d.SetTarget(lay(0, 0))
			d.SetEnforced(true, policy.TopLayer)
		}
		d.Start()
	}
	src := newVP8Source()
	src.layers, src.perFrame, src.body = 1, 4, [3]int{1100, 1100, 1100}
	var frames [][]byte
	for range 64 {
		frames = append(frames, src.nextFrame()[0]...)
	}
	b.ReportAllocs()
	b.SetBytes(1200)
	now := time.Second
	i := 0
	for b.Loop() {
		// Replay with fresh sequence numbers so the stream stays valid.
		p := frames[i%len(frames)]
		media.SetSeq(p, uint16(i))
		media.SetTimestamp(p, uint32(i/4)*3000)
		recv.WriteRTP(0, p, now)
		now += 8 * time.Millisecond
		i++
	}
}

// FuzzReceiver feeds arbitrary packets to every layer of a receiver with a bound down-track, and
// arbitrary RTCP to the down-track: nothing may panic, and what cannot be parsed is counted.
func FuzzReceiver(f *testing.F) {
	src := newVP8Source()
	for _, p := range src.nextFrame() {
		f.Add(p[0], []byte{0x81, 0xc9, 0, 7, 0, 0, 0, 1, 0, 0, 4, 87, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	}
	f.Add([]byte{0x80, 98, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0xA8, 0x80, 0x05, 0x00, 3, 0xAA}, []byte{0x81, 0xcd, 0, 3, 0, 0, 0, 1, 0, 0, 4, 87, 0, 5, 0, 0})
	f.Fuzz(func(t *testing.T, pkt, rtcpBytes []byte) {
		for _, codec := range []media.Codec{media.CodecVP8, media.CodecVP9, media.CodecH264, media.CodecAV1, media.CodecOpus} {
			recv := NewReceiver(ReceiverConfig{Codec: codec, Simulcast: codec == media.CodecVP8, Extensions: ExtIDs{AudioLevel: 1, DependencyDescriptor: 2}}, nil)
			d := NewDownTrack(recv, DownTrackConfig{ID: "v", Codec: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000}, RespondNACK: true})
			if _, err := d.Bind(&fakeBinding{rtx: true}); err != nil {
				t.Fatal(err)
			}
			d.Start()
			for l := -1; l < 4; l++ {
				recv.WriteRTP(l, pkt, time.Duration(l+2)*time.Millisecond)
			}
			d.HandleRTCP(rtcpBytes, time.Second)
			d.Pad(300)
			st := recv.Stats()
			if st.Packets+st.MalformedRTP+st.MalformedPayload == 0 && len(pkt) > 0 {
				// Layers -1 and 3 are out of range and ignored; the others must count the packet.
				t.Fatalf("packet neither accepted nor counted as malformed: %+v", st)
			}
		}
	})
}
