package gcc

import (
	"reflect"
	"testing"
	"time"

	"github.com/strata-rtc/strata/cc"
	"github.com/strata-rtc/strata/cc/internal/cctest"
)

// rembLoop runs the draft receiver at the far end and a DraftSender that follows its REMB
// messages (the classic draft deployment). The harness hands feedback to the sender after the
// reverse-path delay; replaying the reported arrivals into the receiver there is equivalent to
// running it at the receiver and sending its REMB back over the same path.
type rembLoop struct {
	*DraftSender
	rx *Receiver
}

func newREMBLoop() *rembLoop { return &rembLoop{DraftSender: NewDraftSender(), rx: NewReceiver()} }

func (l *rembLoop) OnFeedback(fb cc.Feedback) {
	lost := 0
	for _, p := range fb.Packets {
		if p.Lost {
			lost++
			continue
		}
		l.rx.OnPacket(cc.ReceivedPacket{SeqNo: p.SeqNo, SendTime: p.SendTime, Arrival: p.Arrival, Size: p.Size})
	}
	l.DraftSender.OnLossReport(fb.Now, lost, len(fb.Packets))
	if v, due := l.rx.REMB(fb.Packets[len(fb.Packets)-1].Arrival); due {
		l.DraftSender.OnREMB(fb.Now, v)
	}
}

func TestClosedLoopConvergence(t *testing.T) {
	for _, tc := range []struct {
		name     string
		make     func() cc.RateController
		duration time.Duration
		settle   time.Duration // ramp-up allowed before the checks
		minShare float64       // mean delivered rate over capacity, at least
	}{
		{"send-side", func() cc.RateController { return NewSender() }, 60 * time.Second, 10 * time.Second, 0.8},
		{"draft-feedback", func() cc.RateController { return NewDraftSender() }, 90 * time.Second, 45 * time.Second, 0.7},
		{"draft-remb", func() cc.RateController { return newREMBLoop() }, 90 * time.Second, 45 * time.Second, 0.7},
	} {
		for _, capacity := range []cc.Bitrate{cc.Mbps, 2 * cc.Mbps} {
			t.Run(tc.name+"/"+capacity.String(), func(t *testing.T) {
				tr := cctest.RunRate(tc.make(), cctest.RateConfig{Link: bottleneck(capacity), Duration: tc.duration})
				from, to := tc.settle, tc.duration
				delivered := tr.MeanDelivered(from, to)
				if share := delivered.Bps() / capacity.Bps(); share < tc.minShare || share > 1.01 {
					t.Errorf("mean delivered %v = %.2f × capacity, want within [%.2f, 1]\n%s", delivered, share, tc.minShare, tr.String())
				}
				if target := tr.MeanTarget(from, to); target.Bps() > 1.1*capacity.Bps() {
					t.Errorf("mean target %v above 1.1 × capacity", target)
				}
				// No standing queue: the delay detector keeps the bottleneck queue short.
				if q := tr.MeanQueueDelay(from, to); q > 40*time.Millisecond {
					t.Errorf("mean queuing delay %v, want ≤ 40 ms", q)
				}
				if q := tr.MaxQueueDelay(from, to); q > 150*time.Millisecond {
					t.Errorf("max queuing delay %v, want ≤ 150 ms (buffer 300 ms)", q)
				}
			})
		}
	}
}

func TestSameInputsGiveIdenticalOutputs(t *testing.T) {
	for name, make := range map[string]func() cc.RateController{
		"send-side":      func() cc.RateController { return NewSender() },
		"draft-feedback": func() cc.RateController { return NewDraftSender() },
		"draft-remb":     func() cc.RateController { return newREMBLoop() },
	} {
		cfg := cctest.RateConfig{Link: bottleneck(cc.Mbps), Duration: 20 * time.Second}
		a, b := cctest.RunRate(make(), cfg), cctest.RunRate(make(), cfg)
		if len(a.Samples) == 0 || !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs of the same trace differ", name)
		}
	}
}

func TestReceiverClockOffsetDoesNotMatter(t *testing.T) {
	for name, make := range map[string]func() cc.RateController{
		"send-side":      func() cc.RateController { return NewSender() },
		"draft-feedback": func() cc.RateController { return NewDraftSender() },
	} {
		cfg := cctest.RateConfig{Link: bottleneck(cc.Mbps), Duration: 20 * time.Second}
		base := cctest.RunRate(make(), cfg)
		for _, off := range []time.Duration{time.Hour, -37 * time.Minute} {
			shifted := cctest.RunRate(cctest.ShiftArrivals(make(), off), cfg)
			if !reflect.DeepEqual(base.Targets(), shifted.Targets()) {
				t.Errorf("%s: arrival clock offset %v changed the target series", name, off)
			}
		}
	}
}
