package rtsp

import (
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/bluenviron/gortsplib/v5/pkg/description"
	"github.com/bluenviron/gortsplib/v5/pkg/format"
	"github.com/pion/rtp"

	"github.com/strata-rtc/strata/internal/sfu"
)

// TestWriteAllocatesNothing: the packet path (renumbering, marshalling, the Receiver) allocates
// nothing per packet.
func TestWriteAllocatesNothing(t *testing.T) {
	f := &format.H264{PayloadTyp: 96, PacketizationMode: 1}
	ch, ok := choose(&description.Media{Type: description.MediaTypeVideo, Formats: []format.Format{f}})
	if !ok {
		t.Fatal("H.264 not chosen")
	}
	var packets, oversize atomic.Uint64
	tr := newTrack(ch, 0, sfu.ReceiverConfig{}, slog.New(slog.DiscardHandler), &packets, &oversize)
	tr.attach(&ch, nil)
	pkt := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SSRC: 7, Marker: true}, Payload: append([]byte{0x65}, make([]byte, 1000)...)}
	allocs := testing.AllocsPerRun(1000, func() {
		pkt.SequenceNumber++
		pkt.Timestamp += 3000
		tr.write(pkt)
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per packet", allocs)
	}
	if st := tr.Recv.Stats(); st.Packets < 1000 || st.MalformedRTP+st.MalformedPayload != 0 {
		t.Errorf("receiver %+v", st)
	}

	// A packet over a cache slot (a server sending big packets over TCP) is counted and dropped.
	pkt.Payload = make([]byte, 2000)
	pkt.Payload[0] = 0x65
	before := tr.Recv.Stats().Packets
	tr.write(pkt)
	if oversize.Load() != 1 || tr.Recv.Stats().Packets != before {
		t.Errorf("oversize %d, receiver packets %d -> %d", oversize.Load(), before, tr.Recv.Stats().Packets)
	}
}
