package rtpbridge

import (
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/pion/rtcp"

	"github.com/strata-rtc/strata/internal/sfu"
)

// reportInterval is how often strata sends the plain peer its sender and receiver reports.
const reportInterval = 2 * time.Second

// reportState is what the peer's reports said.
type reportState struct {
	lsr       atomic.Uint32 // middle 32 bits of the NTP time of the peer's last sender report
	lsrAt     atomic.Int64  // when it arrived (sfu.Now)
	lost      atomic.Int64  // cumulative loss of strata's stream, as the peer reports it
	jitter    atomic.Uint32 // interarrival jitter of strata's stream, timestamp units
	rtcpFixed atomic.Bool   // the RTCP address was latched from the peer's own RTCP
}

// handleRTCP reads the peer's RTCP: keyframe requests go to the browser, reports into the stats.
func (l *leg) handleRTCP(pkt []byte, from netip.AddrPort) {
	if ctx := l.inSRTCP.Load(); ctx != nil {
		out, err := ctx.DecryptRTCP(nil, pkt, nil)
		if err != nil {
			return
		}
		pkt = out
	}
	pkts, err := rtcp.Unmarshal(pkt)
	if err != nil {
		return
	}
	if !l.rtcpMux.Load() && !l.reports.rtcpFixed.Swap(true) {
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		l.remoteRTCP.Store(&from)
	}
	now := sfu.Now()
	for _, p := range pkts {
		switch p := p.(type) {
		case *rtcp.SenderReport:
			l.reports.lsr.Store(uint32(p.NTPTime >> 16))
			l.reports.lsrAt.Store(int64(now))
			l.readReports(p.Reports)
		case *rtcp.ReceiverReport:
			l.readReports(p.Reports)
		case *rtcp.PictureLossIndication, *rtcp.FullIntraRequest:
			if l.fromBrowser != nil {
				l.fromBrowser.RequestKeyframe(0, now)
			}
		}
	}
}

func (l *leg) readReports(rr []rtcp.ReceptionReport) {
	for _, r := range rr {
		if r.SSRC == l.out.ssrc {
			l.reports.lost.Store(int64(r.TotalLost))
			l.reports.jitter.Store(r.Jitter)
		}
	}
}

// reportLoop sends a sender report (with a reception report of the peer's stream) every
// reportInterval until the leg stops.
func (l *leg) reportLoop() {
	defer l.wg.Done()
	t := time.NewTicker(reportInterval)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
			l.sendRTCP(l.reportPackets())
		}
	}
}

func (l *leg) reportPackets() []rtcp.Packet {
	var reports []rtcp.ReceptionReport
	if ssrc := l.in.ssrc.Load(); ssrc != 0 {
		r := rtcp.ReceptionReport{SSRC: ssrc, TotalLost: uint32(max(l.in.lost.Load(), 0)) & 0xffffff,
			Jitter: uint32(l.in.jitter.Load() >> 4)}
		if at := l.reports.lsrAt.Load(); at != 0 {
			r.LastSenderReport = l.reports.lsr.Load()
			r.Delay = uint32((sfu.Now() - time.Duration(at)).Seconds() * 65536)
		}
		reports = append(reports, r)
	}
	if l.out.packets.Load() == 0 {
		return []rtcp.Packet{&rtcp.ReceiverReport{SSRC: l.out.ssrc, Reports: reports}}
	}
	l.out.mu.Lock()
	ts := l.out.nowTS(sfu.Now())
	l.out.mu.Unlock()
	return []rtcp.Packet{&rtcp.SenderReport{
		SSRC: l.out.ssrc, NTPTime: ntpTime(time.Now()), RTPTime: ts,
		PacketCount: uint32(l.out.packets.Load()), OctetCount: uint32(l.out.octets.Load()), Reports: reports,
	}}
}

// requestKeyframe asks the plain peer for a keyframe, both ways phones understand: PLI and FIR.
func (l *leg) requestKeyframe() {
	ssrc := l.in.ssrc.Load()
	l.sendRTCP([]rtcp.Packet{
		&rtcp.PictureLossIndication{SenderSSRC: l.out.ssrc, MediaSSRC: ssrc},
		&rtcp.FullIntraRequest{SenderSSRC: l.out.ssrc, MediaSSRC: ssrc, FIR: []rtcp.FIREntry{{SSRC: ssrc, SequenceNumber: l.firSeq()}}},
	})
}

func (l *leg) firSeq() uint8 { return uint8(l.firCount.Add(1)) }

// sendRTCP sends a compound packet to the peer's RTCP address, encrypted with strata's key
// under the sender's lock (SRTP and SRTCP share the context).
func (l *leg) sendRTCP(pkts []rtcp.Packet) {
	dst := l.remoteRTCP.Load()
	if dst == nil {
		return
	}
	b, err := rtcp.Marshal(pkts)
	if err != nil {
		return
	}
	l.out.mu.Lock()
	if l.out.ctx != nil {
		b, err = l.out.ctx.EncryptRTCP(nil, b, nil)
	}
	l.out.mu.Unlock()
	if err != nil {
		return
	}
	conn := l.rtcp
	if l.rtcpMux.Load() {
		conn = l.rtp
	}
	if _, err := conn.WriteToUDPAddrPort(b, *dst); err != nil && !errors.Is(err, net.ErrClosed) {
		l.s.log.Debug("sending RTCP to the plain peer", "err", err)
	}
}

// ntpTime is t in NTP format (seconds since 1900 in the upper 32 bits).
func ntpTime(t time.Time) uint64 {
	const ntpEpochOffset = 2208988800
	secs := uint64(t.Unix()) + ntpEpochOffset
	frac := uint64(t.Nanosecond()) << 32 / 1e9
	return secs<<32 | frac
}
