package flows

import (
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/internal/rtcpview"
	"github.com/strata-rtc/strata/internal/sim"
)

// A receive-side estimator's report (sim.RxReport) travels in RTCP. A report with only a rate
// (GCC's draft receiver) is a standard REMB; any other (NADA's x_curr, receive rate and mode) is an
// application-defined packet (RFC 3550 §6.7) named "STRX" whose data is:
//
//	rate   uint64  bit/s (0: none)
//	signal int64   nanoseconds (NADA's x_curr)
//	recv   uint64  bit/s
//	mode   uint8, then 3 zero bytes
//
// Its SSRC field is the media stream's SSRC, so that Pion hands it to that stream's sender.
const (
	reportName    = "STRX"
	reportSubtype = 0
	reportDataLen = 28
)

var errReport = errors.New("malformed STRX report")

// reportPacket is the RTCP packet carrying r about the stream ssrc.
func reportPacket(r sim.RxReport, ssrc uint32) rtcp.Packet {
	if r.Rate > 0 && r.Signal == 0 && r.Recv == 0 && r.Mode == 0 {
		return &rtcp.ReceiverEstimatedMaximumBitrate{Bitrate: float32(r.Rate), SSRCs: []uint32{ssrc}}
	}
	return &rtcp.ApplicationDefined{SubType: reportSubtype, SSRC: ssrc, Name: reportName,
		Data: appendReport(make([]byte, 0, reportDataLen), r)}
}

func appendReport(b []byte, r sim.RxReport) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(math.Max(0, r.Rate)))
	b = binary.BigEndian.AppendUint64(b, uint64(int64(r.Signal*1e9)))
	b = binary.BigEndian.AppendUint64(b, uint64(math.Max(0, r.Recv)))
	return append(b, byte(r.Mode), 0, 0, 0)
}

// parseReport reads an STRX application-defined packet's body (SSRC, name, data). ok is false for
// an APP packet of another name; a malformed STRX packet is an error.
func parseReport(p rtcpview.Packet) (r sim.RxReport, ok bool, err error) {
	b := p.Body
	if p.Type != rtcpview.TypeAPP || len(b) < 8 || string(b[4:8]) != reportName {
		return r, false, nil
	}
	if p.Count != reportSubtype || len(b) != 8+reportDataLen {
		return r, true, errReport
	}
	d := b[8:]
	rate, signal, recv := binary.BigEndian.Uint64(d), int64(binary.BigEndian.Uint64(d[8:])), binary.BigEndian.Uint64(d[16:])
	if rate > 1e12 || recv > 1e12 || signal < 0 || signal > int64(time.Hour) {
		return r, true, errReport
	}
	r = sim.RxReport{Rate: float64(rate), Signal: float64(signal) / 1e9, Recv: float64(recv), Mode: int8(d[24])}
	return r, true, nil
}

// rtcpLoop reads the RTCP the receiver sends about the stream (Pion's interceptors, among them
// the estimator's, have already seen it) and hands what only this sender uses to the controller:
// receive-side reports, and receiver reports' loss for the draft's loss controller.
func (s *mediaSender) rtcpLoop(sender *webrtc.RTPSender) {
	consumer, _ := s.m.ctl.Rate.(sim.ReportConsumer)
	loss, _ := s.m.ctl.Rate.(lossReporter)
	if !s.m.opts.rrLoss {
		loss = nil
	}
	var rr rrLoss
	buf := make([]byte, 1500)
	for {
		n, _, err := sender.Read(buf)
		if err != nil {
			return
		}
		it := rtcpview.Iterate(buf[:n])
		for p, ok := it.Next(); ok; p, ok = it.Next() {
			switch {
			case p.Kind() == rtcpview.KindREMB && consumer != nil:
				if remb, err := rtcpview.ParseREMB(p); err == nil {
					s.report(consumer, sim.RxReport{Rate: float64(remb.Bitrate())})
				}
			case p.Type == rtcpview.TypeAPP && consumer != nil:
				if r, ok, err := parseReport(p); ok && err == nil {
					s.report(consumer, r)
				}
			case p.Kind() == rtcpview.KindRR && loss != nil:
				if rep, err := rtcpview.ParseReceiverReport(p); err == nil {
					for i := range rep.Reports.Len() {
						if lost, expected, ok := rr.update(rep.Reports.At(i)); ok {
							s.lossReports++
							s.est.With(func(now time.Duration, _ cc.RateController) { loss.OnLossReport(now, lost, expected) })
						}
					}
				}
			}
		}
	}
}

func (s *mediaSender) report(c sim.ReportConsumer, r sim.RxReport) {
	s.rxReports++
	s.est.With(func(now time.Duration, _ cc.RateController) { c.OnReport(now, r) })
}

// rrLoss turns the cumulative counts of successive receiver reports into the packets lost and
// expected between them (RFC 3550 §6.4.1), for the stream's one SSRC.
type rrLoss struct {
	started bool
	highest uint32
	lost    int32
	ssrc    uint32
}

func (l *rrLoss) update(b rtcpview.ReportBlock) (lost, expected int, ok bool) {
	if !l.started || b.SSRC != l.ssrc {
		l.started, l.ssrc, l.highest, l.lost = true, b.SSRC, b.HighestSeq, b.TotalLost
		return 0, 0, false
	}
	expected = int(int32(b.HighestSeq - l.highest))
	lost = int(b.TotalLost - l.lost)
	l.highest, l.lost = b.HighestSeq, b.TotalLost
	if expected <= 0 {
		return 0, 0, false
	}
	return min(max(lost, 0), expected), expected, true
}
