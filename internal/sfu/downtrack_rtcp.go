package sfu

import (
	"errors"
	"io"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/internal/media"
	"github.com/strata-rtc/strata/internal/rtcpview"
)

// paddingSize is the padding carried by one probe packet (the most one RTP packet can say).
const paddingSize = 255

// ProbePaddingSize is the RTP padding of every probe packet: how a receiver that sees only byte
// counts (a browser's getStats) tells the probes apart.
const ProbePaddingSize = paddingSize

// rtcpBufferSize holds any RTCP packet Pion passes on (its receive MTU is 1460 bytes).
const rtcpBufferSize = 1500

// ReadSenderRTCP reads the raw RTCP a subscriber sends about a sender's track and hands each
// compound packet to handle, until the sender closes. The buffer is reused: handle must not keep
// it. Pion's RTPSender.ReadRTCP allocated a buffer per packet and unmarshalled every one into its
// structures, transport-wide feedback included, which is the most frequent and read (raw) by the
// estimator's interceptor anyway; here the packets are parsed in place (internal/rtcpview).
func ReadSenderRTCP(sender *webrtc.RTPSender, handle func(b []byte)) {
	buf := make([]byte, rtcpBufferSize)
	for {
		n, _, err := sender.Read(buf)
		if errors.Is(err, io.ErrShortBuffer) {
			continue // Pion dropped a packet larger than its own MTU
		}
		if err != nil {
			return
		}
		handle(buf[:n])
	}
}

// ReadRTCP reads the subscriber's feedback about this track from its sender until the sender
// closes (ReadSenderRTCP, HandleRTCP). Run it on its own goroutine.
func (d *DownTrack) ReadRTCP(sender *webrtc.RTPSender) {
	ReadSenderRTCP(sender, func(b []byte) { d.HandleRTCP(b, Now()) })
}

// HandleRTCP processes a compound RTCP packet from the subscriber: keyframe requests go to the
// publisher (rate-limited by the receiver), NACKs are answered from the cache when RespondNACK is
// set, and receiver reports give the loss the allocator watches. Malformed parts are skipped, the
// rest is still read. It allocates nothing.
func (d *DownTrack) HandleRTCP(b []byte, now time.Duration) {
	ssrc := d.SSRC()
	it := rtcpview.Iterate(b)
	for p, ok := it.Next(); ok; p, ok = it.Next() {
		switch p.Kind() {
		case rtcpview.KindPLI:
			if _, err := rtcpview.ParsePLI(p); err == nil {
				d.keyframeRequested(now)
			}
		case rtcpview.KindFIR:
			if _, err := rtcpview.ParseFIR(p); err == nil {
				d.keyframeRequested(now)
			}
		case rtcpview.KindNACK:
			if n, err := rtcpview.ParseNACK(p); err == nil {
				d.onNACK(n, now)
			}
		case rtcpview.KindRR:
			if rr, err := rtcpview.ParseReceiverReport(p); err == nil {
				d.onReports(ssrc, rr.Reports)
			}
		case rtcpview.KindSR:
			if sr, err := rtcpview.ParseSenderReport(p); err == nil {
				d.onReports(ssrc, sr.Reports)
			}
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

func (d *DownTrack) onNACK(n rtcpview.NACK, now time.Duration) {
	lost := n.Lost()
	for seq, ok := lost.Next(); ok; seq, ok = lost.Next() {
		d.nacked.Add(1)
		if d.cfg.RespondNACK {
			d.retransmit(seq, now)
		}
	}
}

func (d *DownTrack) onReports(ssrc uint32, reports rtcpview.ReportBlocks) {
	if ssrc == 0 {
		return
	}
	for k := range reports.Len() {
		r := reports.At(k)
		if r.SSRC != ssrc {
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

// Retransmissions of one packet: at most maxResends, not again within resendSpacing (about a
// round trip plus the receiver's NACK interval), as libwebrtc's RTP sender does not resend a
// packet sooner than an RTT after the last time, and not once it is older than maxResendAge (no
// receiver plays a frame that late; libwebrtc keeps about a second of history). A receiver behind
// a congested link NACKs again every packet whose retransmission the link dropped in turn;
// answering every NACK turned a cut to 250 kbit/s into some 3 Mbit/s of retransmissions into the
// same link (measured in the videoroom's cut test), which kept it saturated and drove the estimate
// to its floor; and after an outage it sent the frames lost in it, seconds old.
const (
	maxResends    = 2
	resendSpacing = 100 * time.Millisecond
	maxResendAge  = time.Second
)

// retransmit sends an output packet again, rebuilt from the receiver's cache with the mapping it
// was first sent with: over RTX when negotiated, else as it was.
func (d *DownTrack) retransmit(outSeq uint16, now time.Duration) {
	d.ownMu.Lock()
	defer d.ownMu.Unlock()
	d.mu.Lock()
	if !d.bound || !d.dst.nack {
		d.mu.Unlock()
		return
	}
	e := d.history.Slot(uint32(outSeq))
	if !e.valid || e.m.OutSeq != outSeq || d.switchDrops(e.sid, e.tid) ||
		e.resends >= maxResends || (e.resends > 0 && now-e.resentAt < resendSpacing) || now-e.sentAt > maxResendAge {
		d.mu.Unlock()
		return
	}
	own := d.ownBuffers()
	n := d.recv.cached(int(e.layer), e.m.InSeq, own.raw[:])
	if n == 0 {
		d.mu.Unlock()
		return
	}
	e.resends++
	e.resentAt = now
	sent, dst, codec := *e, d.dst, d.codec
	var rtxSeq uint16
	if dst.rtxSSRC != 0 {
		d.rtxSeq++
		rtxSeq = d.rtxSeq
	}
	d.mu.Unlock()

	pkt := own.raw[:n]
	h, ok := media.ParseRTP(pkt)
	if !ok {
		return
	}
	f, ok := media.ParsePayload(codec, h.Payload(pkt))
	if !ok {
		return
	}
	payload := h.Payload(pkt)
	sent.m.WritePayload(&f, payload) // in our own copy
	ts := sent.m.Timestamp(h.Timestamp)
	var hdr *rtp.Header
	if dst.rtxSSRC == 0 {
		hdr = own.send.header(sent.marker, dst.pt, outSeq, ts, dst.ssrc)
	} else {
		own.send.buf[0], own.send.buf[1] = byte(outSeq>>8), byte(outSeq)
		payload = own.send.buf[:2+copy(own.send.buf[2:], payload)]
		hdr = own.send.header(sent.marker, dst.rtxPT, rtxSeq, ts, dst.rtxSSRC)
	}
	copyExtensions(hdr, &dst, pkt, &h)
	d.mark(hdr.SSRC, hdr.SequenceNumber, sent.dscp)
	if d.write(dst.writer, hdr, payload, n) {
		d.retransmitted.Add(1)
	}
}

// CanPad reports whether Pad can send on this track: a video track that is bound and has
// forwarded something (padding reuses the last timestamp and takes the next sequence number).
func (d *DownTrack) CanPad() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.canPad()
}

func (d *DownTrack) canPad() bool {
	return d.bound && d.video && !d.paused && !d.enforced && d.packets.Load() > 0
}

// Pad sends at least bytes of padding-only packets (probing the path for the allocator) and
// returns how many bytes it sent: 0 when it cannot now.
//
// The padding goes on the track's own stream, numbered in line with the media (the rewriter makes
// room), not on RTX: a receiver addresses its transport-wide feedback to the SSRC of the last
// packet it got (Chrome and Pion alike), and Pion reads no RTCP addressed to an RTX SSRC, so with
// padding on RTX much of the feedback about a probe never reached the estimator — all of it while
// a paused video was probed for, which then could never resume. Padding is sent between frames
// only (after the packet that ended one) or while nothing is forwarded, so it never splits a
// frame's packets; receivers take padding-only packets for what they are (RFC 3550 §5.1).
func (d *DownTrack) Pad(bytes int) int {
	d.ownMu.Lock()
	defer d.ownMu.Unlock()
	own := d.ownBuffers()
	sent := 0
	for sent < bytes {
		seq, ts, dst, ok := d.nextPadding()
		if !ok {
			break
		}
		hdr := own.send.header(false, dst.pt, seq, ts, dst.ssrc)
		hdr.Padding, hdr.PaddingSize = true, paddingSize
		d.mark(dst.ssrc, seq, 0)
		n, err := dst.writer.WriteRTP(hdr, nil)
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

// nextPadding numbers one padding packet, when padding may go out now.
func (d *DownTrack) nextPadding() (seq uint16, ts uint32, dst destination, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.canPad() || (!d.lastMarker && d.sel.target().Spatial >= 0) {
		return 0, 0, dst, false
	}
	seq, ts, ok = d.rw.Pad()
	return seq, ts, d.dst, ok
}

const rtpHeaderSize = 12
