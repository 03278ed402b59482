package client

import (
	"sync"
	"time"

	"github.com/pion/rtcp"
)

// Feedback intervals of a light receiver, a browser's: transport-wide CC every 100 ms, reception
// reports every second.
const (
	feedbackInterval = 100 * time.Millisecond
	reportEvery      = 10 // feedback intervals
)

// feedbackLoop sends every light receiver's feedback from one goroutine and one ticker (a ticker
// per PeerConnection would wake the generator 10 times a second for each). It runs while any
// receiver is registered.
type feedbackLoop struct {
	mu      sync.Mutex
	taps    map[*tap]func([]rtcp.Packet) error
	running bool
}

func (f *feedbackLoop) add(t *tap, write func([]rtcp.Packet) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.taps == nil {
		f.taps = map[*tap]func([]rtcp.Packet) error{}
	}
	f.taps[t] = write
	if !f.running {
		f.running = true
		go f.run()
	}
}

func (f *feedbackLoop) remove(t *tap) {
	f.mu.Lock()
	delete(f.taps, t)
	f.mu.Unlock()
}

func (f *feedbackLoop) run() {
	tick := time.NewTicker(feedbackInterval)
	defer tick.Stop()
	type entry struct {
		t     *tap
		write func([]rtcp.Packet) error
	}
	var list []entry
	var nacks []uint16
	for n := 1; ; n++ {
		<-tick.C
		f.mu.Lock()
		if len(f.taps) == 0 {
			f.running = false
			f.mu.Unlock()
			return
		}
		list = list[:0]
		for t, w := range f.taps {
			list = append(list, entry{t, w})
		}
		f.mu.Unlock()
		for _, e := range list {
			var pkts []rtcp.Packet
			pkts, nacks = e.t.feedback(e.t.now(), n%reportEvery == 0, nacks[:0])
			if len(pkts) > 0 {
				_ = e.write(pkts) // a closing PeerConnection fails its writes
			}
		}
	}
}

// feedback builds what the receiver says now: transport-wide CC for the packets since the last
// feedback, NACKs for gaps, and with reports the reception report of every stream.
func (t *tap) feedback(now time.Duration, reports bool, scratch []uint16) ([]rtcp.Packet, []uint16) {
	var pkts []rtcp.Packet
	t.mu.Lock()
	if t.twccNew {
		pkts = append(pkts, t.twcc.BuildFeedbackPacket()...)
		t.twccNew = false
	}
	sender := t.senderSSRC
	t.mu.Unlock()
	var rr *rtcp.ReceiverReport
	for _, st := range t.registered() {
		scratch = st.nack(now, scratch[:0])
		if len(scratch) > 0 {
			pkts = append(pkts, &rtcp.TransportLayerNack{SenderSSRC: sender, MediaSSRC: st.ssrcOf(),
				Nacks: rtcp.NackPairsFromSequenceNumbers(scratch)})
		}
		if !reports {
			continue
		}
		if rep, ok := st.receptionReport(now); ok {
			if rr == nil {
				rr = &rtcp.ReceiverReport{SSRC: sender}
			}
			if len(rr.Reports) == 31 { // RFC 3550: at most 31 blocks per report
				pkts = append(pkts, rr)
				rr = &rtcp.ReceiverReport{SSRC: sender}
			}
			rr.Reports = append(rr.Reports, rep)
		}
	}
	if rr != nil {
		pkts = append(pkts, rr)
	}
	return pkts, scratch
}
