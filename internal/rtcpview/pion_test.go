package rtcpview

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/pion/rtcp"
)

// This file compares the views with pion/rtcp's structs. agreeWithPion is used by the cross-check
// tests (where both must accept and agree) and by the fuzzers (where pion's verdict may differ in
// the documented ways listed in fuzz_test.go).

// pionStatuses expands pion's chunks and deltas into statuses with the semantics of the draft:
// only the first PacketStatusCount symbols count. reserved reports a status with symbol 3, which
// pion takes for "received without delta" and this package rejects.
func pionStatuses(fb *rtcp.TransportLayerCC) (out []Status, reserved bool) {
	seq, left, deltas := fb.BaseSequenceNumber, int(fb.PacketStatusCount), fb.RecvDeltas
	emit := func(symbol uint16) {
		if left == 0 {
			return
		}
		left--
		s := Status{Seq: seq}
		seq++
		switch symbol {
		case rtcp.TypeTCCPacketReceivedSmallDelta, rtcp.TypeTCCPacketReceivedLargeDelta:
			s.Received = true
			if len(deltas) > 0 {
				s.Delta = time.Duration(deltas[0].Delta) * time.Microsecond
				deltas = deltas[1:]
			}
		case rtcp.TypeTCCPacketReceivedWithoutDelta:
			reserved = true
		}
		out = append(out, s)
	}
	for _, chunk := range fb.PacketChunks {
		switch c := chunk.(type) {
		case *rtcp.RunLengthChunk:
			for i := 0; i < int(c.RunLength) && left > 0; i++ {
				emit(c.PacketStatusSymbol)
			}
		case *rtcp.StatusVectorChunk:
			for _, s := range c.SymbolList {
				emit(s)
			}
		}
	}
	return out, reserved
}

// agreeWithPion parses p with the view of its kind and compares it with q, pion's parse of the same
// bytes. It returns "" when they agree, else what differs.
func agreeWithPion(p Packet, q rtcp.Packet) string {
	switch q := q.(type) {
	case *rtcp.SenderReport:
		sr, err := ParseSenderReport(p)
		if err != nil {
			return fmt.Sprintf("SR rejected: %v", err)
		}
		if sr.SSRC != q.SSRC || sr.NTPTime != q.NTPTime || sr.RTPTime != q.RTPTime ||
			sr.PacketCount != q.PacketCount || sr.OctetCount != q.OctetCount {
			return fmt.Sprintf("SR sender info %+v, pion %+v", sr, q)
		}
		if !bytes.Equal(sr.Extensions, q.ProfileExtensions) {
			return fmt.Sprintf("SR extensions % x, pion % x", sr.Extensions, q.ProfileExtensions)
		}
		return sameBlocks(sr.Reports, q.Reports)
	case *rtcp.ReceiverReport:
		rr, err := ParseReceiverReport(p)
		if err != nil {
			return fmt.Sprintf("RR rejected: %v", err)
		}
		if rr.SSRC != q.SSRC {
			return fmt.Sprintf("RR SSRC %x, pion %x", rr.SSRC, q.SSRC)
		}
		if !bytes.Equal(rr.Extensions, q.ProfileExtensions) {
			return fmt.Sprintf("RR extensions % x, pion % x", rr.Extensions, q.ProfileExtensions)
		}
		return sameBlocks(rr.Reports, q.Reports)
	case *rtcp.TransportLayerNack:
		return agreeNACK(p, q)
	case *rtcp.PictureLossIndication:
		pli, err := ParsePLI(p)
		if err != nil {
			return fmt.Sprintf("PLI rejected: %v", err)
		}
		if pli.SenderSSRC != q.SenderSSRC || pli.MediaSSRC != q.MediaSSRC {
			return fmt.Sprintf("PLI %+v, pion %+v", pli, q)
		}
	case *rtcp.FullIntraRequest:
		return agreeFIR(p, q)
	case *rtcp.ReceiverEstimatedMaximumBitrate:
		return agreeREMB(p, q)
	case *rtcp.TransportLayerCC:
		return agreeTWCC(p, q)
	}
	return ""
}

func sameBlocks(ours ReportBlocks, theirs []rtcp.ReceptionReport) string {
	if ours.Len() != len(theirs) {
		return fmt.Sprintf("%d report blocks, pion %d", ours.Len(), len(theirs))
	}
	for i, r := range theirs {
		b := ours.At(i)
		if b.SSRC != r.SSRC || b.FractionLost != r.FractionLost || uint32(b.TotalLost)&0xffffff != r.TotalLost ||
			b.HighestSeq != r.LastSequenceNumber || b.Jitter != r.Jitter || b.LastSR != r.LastSenderReport ||
			b.DelaySinceLSR != r.Delay {
			return fmt.Sprintf("block %d: %+v, pion %+v", i, b, r)
		}
	}
	return ""
}

func agreeNACK(p Packet, q *rtcp.TransportLayerNack) string {
	n, err := ParseNACK(p)
	if err != nil {
		return fmt.Sprintf("NACK rejected: %v", err)
	}
	if n.SenderSSRC != q.SenderSSRC || n.MediaSSRC != q.MediaSSRC || n.Pairs() != len(q.Nacks) {
		return fmt.Sprintf("NACK %x/%x with %d pairs, pion %x/%x with %d", n.SenderSSRC, n.MediaSSRC,
			n.Pairs(), q.SenderSSRC, q.MediaSSRC, len(q.Nacks))
	}
	var want []uint16
	for i, pair := range q.Nacks {
		if pid, blp := n.Pair(i); pid != pair.PacketID || blp != uint16(pair.LostPackets) {
			return fmt.Sprintf("pair %d: %d/%016b, pion %+v", i, pid, blp, pair)
		}
		want = append(want, pair.PacketList()...)
	}
	if got := n.AppendLost(nil); !slices.Equal(got, want) {
		return fmt.Sprintf("lost %v, pion %v", got, want)
	}
	return ""
}

func agreeFIR(p Packet, q *rtcp.FullIntraRequest) string {
	f, err := ParseFIR(p)
	if err != nil {
		return fmt.Sprintf("FIR rejected: %v", err)
	}
	if f.SenderSSRC != q.SenderSSRC || f.MediaSSRC != q.MediaSSRC || f.Len() != len(q.FIR) {
		return fmt.Sprintf("FIR %+v, pion %+v", f, q)
	}
	for i, e := range q.FIR {
		if got := f.Entry(i); got.SSRC != e.SSRC || got.Seq != e.SequenceNumber {
			return fmt.Sprintf("FIR entry %d: %+v, pion %+v", i, got, e)
		}
	}
	return ""
}

func agreeREMB(p Packet, q *rtcp.ReceiverEstimatedMaximumBitrate) string {
	r, err := ParseREMB(p)
	if err != nil {
		return fmt.Sprintf("REMB rejected: %v", err)
	}
	if r.SenderSSRC != q.SenderSSRC || r.Len() != len(q.SSRCs) {
		return fmt.Sprintf("REMB %+v, pion %+v", r, q)
	}
	for i, s := range q.SSRCs {
		if r.SSRC(i) != s {
			return fmt.Sprintf("REMB SSRC %d: %x, pion %x", i, r.SSRC(i), s)
		}
	}
	// pion's float32 holds mantissa × 2^exponent exactly (18 significant bits, at most 2^81).
	got, want := r.Bitrate(), float64(q.Bitrate)
	if got == math.MaxUint64 {
		if want < 0x1p64 {
			return fmt.Sprintf("REMB saturated, pion %v", want)
		}
	} else if float64(got) != want {
		return fmt.Sprintf("REMB bitrate %d (%d×2^%d), pion %v", got, r.Mantissa, r.Exponent, want)
	}
	return ""
}

func agreeTWCC(p Packet, q *rtcp.TransportLayerCC) string {
	fb, err := ParseTWCC(p)
	if err != nil {
		return fmt.Sprintf("TWCC rejected: %v", err)
	}
	if fb.SenderSSRC != q.SenderSSRC || fb.MediaSSRC != q.MediaSSRC || fb.BaseSeq != q.BaseSequenceNumber ||
		fb.StatusCount != q.PacketStatusCount || uint32(fb.ReferenceTime)&0xffffff != q.ReferenceTime ||
		fb.FbPktCount != q.FbPktCount {
		return fmt.Sprintf("TWCC header %+v, pion %+v", fb, q)
	}
	want, _ := pionStatuses(q)
	got := fb.AppendStatuses(nil)
	if !slices.Equal(got, want) {
		return fmt.Sprintf("TWCC statuses\n ours %v\n pion %v", got, want)
	}
	return ""
}
