package sfu

import (
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
)

// paddingSize is the padding carried by one probe packet (the most one RTP packet can say).
const paddingSize = 255

// ReadRTCP reads the subscriber's feedback about this track from its sender until the sender
// closes. Run it on its own goroutine.
func (d *DownTrack) ReadRTCP(sender *webrtc.RTPSender) {
	for {
		pkts, _, err := sender.ReadRTCP()
		if err != nil {
			return
		}
		d.HandleRTCP(pkts, Now())
	}
}

// HandleRTCP processes feedback from the subscriber: keyframe requests go to the publisher
// (rate-limited by the receiver), NACKs are answered from the cache when RespondNACK is set, and
// receiver reports give the loss the allocator watches.
func (d *DownTrack) HandleRTCP(pkts []rtcp.Packet, now time.Duration) {
	ssrc := d.SSRC()
	for _, p := range pkts {
		switch p := p.(type) {
		case *rtcp.PictureLossIndication:
			d.keyframeRequested(now)
		case *rtcp.FullIntraRequest:
			d.keyframeRequested(now)
		case *rtcp.TransportLayerNack:
			d.onNACK(p, now)
		case *rtcp.ReceiverReport:
			d.onReports(ssrc, p.Reports)
		case *rtcp.SenderReport:
			d.onReports(ssrc, p.Reports)
		}
	}
}

func (d *DownTrack) keyframeRequested(now time.Duration) {
	if !d.video {
		return
	}
	d.kfRequests.Add(1)
	layer := 0
	recv := d.Receiver()
	if cur := d.Current(); recv.cfg.Simulcast && cur.Spatial > 0 {
		layer = int(cur.Spatial)
	}
	recv.RequestKeyframe(layer, now)
}

func (d *DownTrack) onNACK(n *rtcp.TransportLayerNack, now time.Duration) {
	for _, pair := range n.Nacks {
		pair.Range(func(seq uint16) bool {
			d.nacked.Add(1)
			if d.cfg.RespondNACK {
				d.retransmit(seq, now)
			}
			return true
		})
	}
}

func (d *DownTrack) onReports(ssrc uint32, reports []rtcp.ReceptionReport) {
	for _, r := range reports {
		if r.SSRC != ssrc || ssrc == 0 {
			continue
		}
		loss := float64(r.FractionLost) / 256
		d.lossMu.Lock()
		d.lossSum += loss
		d.lossReports++
		d.lastLoss = loss
		d.lossMu.Unlock()
	}
}

// TakeLoss returns the average fraction lost in the receiver reports that arrived since the last
// call; ok is false when none did.
func (d *DownTrack) TakeLoss() (loss float64, ok bool) {
	d.lossMu.Lock()
	defer d.lossMu.Unlock()
	if d.lossReports == 0 {
		return 0, false
	}
	loss = d.lossSum / float64(d.lossReports)
	d.lossSum, d.lossReports = 0, 0
	return loss, true
}

// retransmit sends an output packet again, rebuilt from the receiver's cache with the mapping it
// was first sent with: over RTX when negotiated, else as it was.
func (d *DownTrack) retransmit(outSeq uint16, _ time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.history[outSeq&(historySize-1)]
	if !d.bound || !e.valid || e.m.OutSeq != outSeq {
		return
	}
	n := d.recv.cached(int(e.layer), e.m.InSeq, d.buf[:])
	if n == 0 {
		return
	}
	pkt := d.buf[:n]
	h, ok := media.ParseRTP(pkt)
	if !ok {
		return
	}
	f, ok := media.ParsePayload(d.codec, h.Payload(pkt))
	if !ok {
		return
	}
	d.rw.Apply(pkt, &h, &f, e.m)
	payload := pkt[h.PayloadStart:h.PayloadEnd]
	if d.rtxSSRC == 0 {
		d.write(pkt, &h, d.ssrc, d.pt, outSeq, payload)
	} else {
		d.rtxBuf[0], d.rtxBuf[1] = byte(outSeq>>8), byte(outSeq)
		rtx := d.rtxBuf[:2+copy(d.rtxBuf[2:], payload)]
		d.write(pkt, &h, d.rtxSSRC, d.rtxPT, d.nextRTXSeq(), rtx)
	}
	d.retransmitted.Add(1)
}

func (d *DownTrack) nextRTXSeq() uint16 {
	d.rtxSeq++
	return d.rtxSeq
}

// Pad sends at least bytes of padding-only packets on the RTX stream (probing the path for the
// allocator) and returns how many bytes it sent: 0 when RTX was not negotiated or nothing has been
// forwarded yet.
func (d *DownTrack) Pad(bytes int) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	ts, _ := d.rw.LastTimestamp()
	if !d.bound || d.rtxSSRC == 0 || d.paused || d.packets.Load() == 0 {
		return 0
	}
	sent := 0
	for sent < bytes {
		d.hdr = rtp.Header{
			Version: 2, Padding: true, PaddingSize: paddingSize, PayloadType: d.rtxPT,
			SequenceNumber: d.nextRTXSeq(), Timestamp: ts, SSRC: d.rtxSSRC, Extensions: d.extBuf[:0],
		}
		n, err := d.writer.WriteRTP(&d.hdr, nil)
		if err != nil {
			break
		}
		n = max(n, rtpHeaderSize+paddingSize)
		sent += n
		d.padPackets.Add(1)
		d.padBytes.Add(uint64(n))
	}
	return sent
}

const rtpHeaderSize = 12
