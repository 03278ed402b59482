package audiobridge

import (
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/config"
	"github.com/strata-rtc/strata/internal/record"
)

// A running mixer shows in the plugin's totals: one mixer while it runs, its ticks and busy time,
// which stay when it stops.
func TestMixerTotals(t *testing.T) {
	p := New(config.Default().Plugins.AudioBridge, record.SessionOptions{}, nil)
	defer p.Destroy()
	r := p.rooms[1234]
	r.roster.Store(&roster{})
	l := startMixLoop(r)
	deadline := time.Now().Add(5 * time.Second)
	for p.MixerTotals().Ticks < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	running := p.MixerTotals()
	l.stop()
	stopped := p.MixerTotals()
	if running.Running != 1 || running.Ticks < 3 || running.Busy <= 0 {
		t.Errorf("while mixing: %+v, want one mixer, 3 ticks or more and some busy time", running)
	}
	if stopped.Running != 0 || stopped.Ticks < running.Ticks || stopped.Busy < running.Busy {
		t.Errorf("stopped: %+v after %+v, want no mixer and the counts kept", stopped, running)
	}
}

func TestCounts(t *testing.T) {
	p := New(config.Default().Plugins.AudioBridge, record.SessionOptions{}, nil)
	defer p.Destroy()
	if c := p.Counts(); c.Rooms != len(p.rooms) || c.Rooms == 0 || c.Participants != 0 {
		t.Errorf("counts %+v, want the configured rooms, empty", c)
	}
}
