package sim

import (
	"time"

	"github.com/strata-rtc/strata/cc"
)

// SACK loss recovery (RFC 6675) with proportional rate reduction (RFC
// 6937), as Linux and ns-3 run it, with the window from the controller.
//
// Every ACK carries the segment that triggered it when that segment is
// above the cumulative point (the first SACK block of a real ACK). The
// sender keeps a scoreboard of the outstanding segments: a segment is lost
// once DupThresh (3) segments above it are SACKed (the FACK rule, exact on a
// network that never reorders). On the first loss of an episode the
// controller gets OnLoss and sets cwnd = ssthresh. Until the ACK passes the
// recovery point, PRR decides how many segments each ACK releases, so that
// the flight shrinks smoothly to ssthresh; lost segments are retransmitted
// first. Outside recovery the transport sends while pipe (segments it
// believes in the network) is below cwnd. The controller sees the episode's
// cumulative ACKs as one OnAck when it ends, so it leaves recovery exactly
// once, and it never sees duplicate ACKs (it would otherwise run its own
// fast retransmit).

const (
	sbSacked uint8 = 1 << iota
	sbLost
	sbRtx
)

const dupThresh = 3

type sackState struct {
	board      []uint8 // flags for [una, high), indexed by seq & mask
	sacked     int     // SACKed segments in [una, high)
	lost       int     // lost, not SACKed
	rtx        int     // retransmitted, not SACKed or acked
	highSacked int64
	lostMark   int64 // segments below this were considered for loss marking
	rtxNext    int64 // lowest segment that may still need a retransmission
	inRec      bool
	recPoint   int64
	recAcked   int
	guard      int64 // no new episode for losses at or below this (after an RTO)
	// PRR state, in segments: the flight when recovery began, segments
	// delivered and sent since, the target (ssthresh) and this ACK's quota.
	prrRecoverFS, prrDelivered, prrOut, prrSsthresh, prrQuota int
}

func (f *TCPFlow) sb(seq int64) *uint8 {
	s := &f.sack
	return &s.board[seq&int64(len(s.board)-1)]
}

// growBoard makes room for segment seq.
func (f *TCPFlow) growBoard(seq int64) {
	s := &f.sack
	if s.board == nil {
		s.board = make([]uint8, 256)
	}
	for seq-f.una >= int64(len(s.board)) {
		old := s.board
		s.board = make([]uint8, 2*len(old))
		for q := f.una; q < f.high; q++ {
			s.board[q&int64(len(s.board)-1)] = old[q&int64(len(old)-1)]
		}
	}
}

func (f *TCPFlow) pipe() int {
	s := &f.sack
	return int(f.high-f.una) - s.sacked - s.lost + s.rtx
}

func (f *TCPFlow) trySendSACK(now time.Duration) {
	s := &f.sack
	cwnd := max(f.cfg.Controller.Cwnd()/f.cfg.MSS, 1)
	for (s.inRec && s.prrQuota > 0) || (!s.inRec && f.pipe() < cwnd) {
		if s.inRec {
			s.prrQuota--
			s.prrOut++
		}
		for s.rtxNext < s.lostMark && *f.sb(s.rtxNext)&(sbSacked|sbLost|sbRtx) != sbLost {
			s.rtxNext++
		}
		if s.rtxNext < s.lostMark && s.rtxNext >= f.una {
			*f.sb(s.rtxNext) |= sbRtx
			s.rtx++
			f.sendSegment(now, s.rtxNext)
			s.rtxNext++
			continue
		}
		if f.nxt >= f.limit || int(f.nxt+1-f.una)*f.cfg.MSS > f.cfg.RcvWindow {
			break
		}
		f.growBoard(f.nxt)
		*f.sb(f.nxt) = 0
		f.sendSegment(now, f.nxt)
		f.nxt++
		f.high = f.nxt
	}
	if f.una < f.high && f.rtoAt == 0 {
		f.armRTO(now)
	}
	f.stats.setCwnd(now, float64(f.cfg.Controller.Cwnd()))
}

func (f *TCPFlow) onAckSACK(p *Packet) {
	s := &f.sack
	now := f.sim.Now()
	ack, sackSeq := p.Ack, p.Sack
	a := cc.Ack{Now: now, InFlight: int(f.high-f.una) * f.cfg.MSS, RTT: now - p.Echo, OneWayDelay: p.OWD,
		CE: p.ECE && f.cfg.ECN}
	f.sim.Free(p)
	if ack < f.una {
		return
	}
	f.stats.setRTT(now, a.RTT)
	newly := 0
	if ack > f.una {
		for q := f.una; q < ack && q < f.high; q++ {
			fl := f.sb(q)
			switch {
			case *fl&sbSacked != 0:
				s.sacked--
			default:
				if *fl&sbLost != 0 {
					s.lost--
				}
				if *fl&sbRtx != 0 {
					s.rtx--
				}
			}
			*fl = 0
		}
		newly = int(ack-f.una) * f.cfg.MSS
		f.una = ack
		f.nxt, f.high = max(f.nxt, ack), max(f.high, ack)
		s.lostMark, s.rtxNext = max(s.lostMark, ack), max(s.rtxNext, ack)
	}
	delivered := newly / f.cfg.MSS // segments this ACK delivered, SACKed one included below
	if sackSeq >= f.una && sackSeq < f.high {
		if fl := f.sb(sackSeq); *fl&sbSacked == 0 {
			delivered++
			if *fl&sbLost != 0 {
				s.lost--
			}
			if *fl&sbRtx != 0 {
				s.rtx--
			}
			*fl |= sbSacked
			s.sacked++
			s.highSacked = max(s.highSacked, sackSeq)
		}
	}
	newLoss := false
	for ; s.lostMark <= s.highSacked-dupThresh; s.lostMark++ {
		if fl := f.sb(s.lostMark); *fl&(sbSacked|sbLost) == 0 {
			*fl |= sbLost
			s.lost++
			newLoss = newLoss || s.lostMark > s.guard
		}
	}
	ctl := f.cfg.Controller
	switch {
	case s.inRec:
		s.recAcked += newly
		if f.una > s.recPoint {
			s.inRec = false
			a.Acked = s.recAcked
			ctl.OnAck(a)
		}
	default:
		if newly > 0 {
			a.Acked = newly
			ctl.OnAck(a)
		}
		if newLoss {
			s.inRec, s.recPoint, s.recAcked = true, f.high-1, 0
			ctl.OnLoss(now, int(f.high-f.una)*f.cfg.MSS)
			s.prrRecoverFS, s.prrDelivered, s.prrOut = int(f.high-f.una), 0, 0
			s.prrSsthresh = max(ctl.Cwnd()/f.cfg.MSS, 1)
		}
	}
	if s.inRec {
		f.prrQuota(delivered)
	}
	if newly > 0 {
		f.afterNewAck(now)
	}
	f.trySend(now)
}

// prrQuota is RFC 6937's sndcnt for one ACK that delivered segments: while
// pipe exceeds ssthresh, send in proportion ssthresh/RecoverFS of what was
// delivered; below it, grow back towards ssthresh no faster than slow start
// (the slow-start reduction bound).
func (f *TCPFlow) prrQuota(delivered int) {
	s := &f.sack
	s.prrDelivered += delivered
	pipe := f.pipe()
	var n int
	if pipe > s.prrSsthresh {
		n = (s.prrDelivered*s.prrSsthresh+s.prrRecoverFS-1)/max(s.prrRecoverFS, 1) - s.prrOut
	} else {
		n = min(s.prrSsthresh-pipe, max(s.prrDelivered-s.prrOut, delivered)+1)
	}
	s.prrQuota = max(n, 0)
}

// sackTimeout marks every outstanding segment not SACKed as lost, so they
// are all retransmitted as the window opens again.
func (f *TCPFlow) sackTimeout() {
	s := &f.sack
	for q := f.una; q < f.high; q++ {
		if fl := f.sb(q); *fl&sbSacked == 0 {
			*fl = sbLost
		}
	}
	s.lost = int(f.high-f.una) - s.sacked
	s.rtx = 0
	s.lostMark, s.rtxNext = f.high, f.una
	s.inRec = false
	s.guard = f.high - 1
}
