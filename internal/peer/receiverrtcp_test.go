package peer

import (
	"slices"
	"testing"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
)

// TestReceiverReportsEchoSenderReports checks that strata's receiver reports about a stream it
// receives carry the LSR of the sender reports the sender sent (and so give it a round-trip time),
// with an OnTrack handler that reads only the track, as the plugins' do.
func TestReceiverReportsEchoSenderReports(t *testing.T) {
	type block struct{ ssrc, lsr uint32 }
	blocks := make(chan block, 64)
	video, sender, _ := sendingClient(t, func(p rtcp.Packet) {
		if rr, ok := p.(*rtcp.ReceiverReport); ok {
			for _, b := range rr.Reports {
				select {
				case blocks <- block{b.SSRC, b.LastSenderReport}:
				default:
				}
			}
		}
	})
	ssrc := uint32(sender.GetParameters().Encodings[0].SSRC)
	stop := make(chan struct{})
	defer close(stop)
	// Pion's sender reports go out every second once the stream has packets; strata reports every
	// second too.
	go sendRTP(video, 96, 10000, 10*time.Millisecond, stop)
	deadline := time.After(8 * time.Second)
	reports := 0
	for {
		select {
		case b := <-blocks:
			if b.ssrc != ssrc {
				continue
			}
			reports++
			if b.lsr != 0 {
				return
			}
		case <-deadline:
			t.Fatalf("%d receiver reports about the stream in 8 s, none with the LSR of a sender report", reports)
		}
	}
}

// TestLostPacketIsAskedForAFewTimes: a packet that never arrives is NACKed at most
// maxNACKsPerPacket times, however long strata keeps receiving the stream.
func TestLostPacketIsAskedForAFewTimes(t *testing.T) {
	const lost = 20
	asked := make(chan struct{}, 256)
	video, _, _ := sendingClient(t, func(p rtcp.Packet) {
		if n, ok := p.(*rtcp.TransportLayerNack); ok {
			for _, pair := range n.Nacks {
				if slices.Contains(pair.PacketList(), lost) {
					select {
					case asked <- struct{}{}:
					default:
					}
				}
			}
		}
	})
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		payload := make([]byte, 100)
		for i := 0; ; i++ {
			if i != lost {
				_ = video.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 96, SequenceNumber: uint16(i), Timestamp: uint32(i * 3000)}, Payload: payload})
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	waitFor(t, asked, 8*time.Second, "a NACK for the lost packet")
	// Pion's generator runs every 100 ms: without the bound, 1.5 s would bring about 15 requests.
	time.Sleep(1500 * time.Millisecond)
	if n := 1 + len(asked); n > maxNACKsPerPacket {
		t.Errorf("the lost packet was asked for %d times, want at most %d", n, maxNACKsPerPacket)
	}
}
