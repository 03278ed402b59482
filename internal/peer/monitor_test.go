package peer

import (
	"testing"
	"time"
)

type eventLog struct{ events []string }

func (l *eventLog) media(mid, kind string, receiving bool) {
	s := "off"
	if receiving {
		s = "on"
	}
	l.events = append(l.events, "media "+mid+" "+kind+" "+s)
}

func (l *eventLog) slowLink(mid, kind string, uplink bool, lost int) {
	d := "down"
	if uplink {
		d = "up"
	}
	l.events = append(l.events, "slow "+mid+" "+kind+" "+d)
}

func (l *eventLog) take() []string {
	e := l.events
	l.events = nil
	return e
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMonitorMediaStartsStopsResumes(t *testing.T) {
	cfg := DefaultMonitorConfig()
	m := newMonitor(cfg)
	in := &streamCounters{}
	m.setStreams("1", "video", []*streamCounters{in}, nil)
	var log eventLog
	ms := time.Millisecond

	m.tick(0, &log)
	if e := log.take(); len(e) != 0 {
		t.Fatalf("events before any packet: %v", e)
	}
	in.packets.Add(1)
	m.tick(250*ms, &log)
	if e := log.take(); !equal(e, []string{"media 1 video on"}) {
		t.Fatalf("first packet: %v", e)
	}
	in.packets.Add(10)
	m.tick(500*ms, &log)
	m.tick(1250*ms, &log) // 750 ms silent: still receiving
	if e := log.take(); len(e) != 0 {
		t.Fatalf("events while flowing: %v", e)
	}
	m.tick(1500*ms, &log) // 1 s silent
	if e := log.take(); !equal(e, []string{"media 1 video off"}) {
		t.Fatalf("after 1 s without packets: %v", e)
	}
	m.tick(3000*ms, &log)
	if e := log.take(); len(e) != 0 {
		t.Fatalf("repeated off: %v", e)
	}
	in.packets.Add(1)
	m.tick(3250*ms, &log)
	if e := log.take(); !equal(e, []string{"media 1 video on"}) {
		t.Fatalf("resume: %v", e)
	}
}

func TestMonitorSendOnlyLineReportsNoMedia(t *testing.T) {
	m := newMonitor(DefaultMonitorConfig())
	out := &streamCounters{}
	m.setStreams("0", "audio", nil, []*streamCounters{out})
	var log eventLog
	out.packets.Add(100)
	m.tick(0, &log)
	m.tick(5*time.Second, &log)
	if e := log.take(); len(e) != 0 {
		t.Fatalf("media events for a line strata only sends on: %v", e)
	}
}

func TestMonitorSlowLinkThresholdAndInterval(t *testing.T) {
	cfg := DefaultMonitorConfig() // threshold 4 per 1 s window, 5 s apart
	m := newMonitor(cfg)
	in, out := &streamCounters{}, &streamCounters{}
	m.setStreams("1", "video", []*streamCounters{in}, []*streamCounters{out})
	var log eventLog
	s := time.Second
	in.packets.Add(1)
	m.tick(0, &log) // opens the first window
	log.take()

	in.nacked.Add(3)
	in.packets.Add(1) // media keeps flowing: only slow-link events are expected
	m.tick(1*s, &log)
	if e := log.take(); len(e) != 0 {
		t.Fatalf("3 NACKed is below the threshold: %v", e)
	}
	in.nacked.Add(4)
	out.nacked.Add(9)
	in.packets.Add(1)
	m.tick(2*s, &log)
	if e := log.take(); !(equal(e, []string{"slow 1 video up", "slow 1 video down"})) {
		t.Fatalf("4 up / 9 down NACKed: %v", e)
	}
	in.nacked.Add(50)
	in.packets.Add(1)
	m.tick(3*s, &log)
	if e := log.take(); len(e) != 0 {
		t.Fatalf("slowlink repeated within the interval: %v", e)
	}
	in.nacked.Add(50)
	in.packets.Add(1)
	m.tick(3500*time.Millisecond, &log)
	in.packets.Add(1)
	m.tick(4*s, &log)
	in.packets.Add(1)
	m.tick(4500*time.Millisecond, &log)
	in.packets.Add(1)
	m.tick(5*s, &log)
	if e := log.take(); len(e) != 0 {
		t.Fatalf("slowlink repeated within the interval: %v", e)
	}
	in.nacked.Add(50)
	in.packets.Add(1)
	m.tick(7*s, &log)
	if e := log.take(); !equal(e, []string{"slow 1 video up"}) {
		t.Fatalf("after the interval: %v", e)
	}
}

func TestMonitorBitrate(t *testing.T) {
	m := newMonitor(DefaultMonitorConfig())
	in, out := &streamCounters{}, &streamCounters{}
	m.setStreams("1", "video", []*streamCounters{in}, []*streamCounters{out})
	var log eventLog
	m.tick(0, &log)
	in.bytes.Add(125_000) // 1 Mbit
	out.bytes.Add(62_500)
	m.tick(2*time.Second, &log) // over 2 s
	bin, bout := m.bitrates("1")
	if bin != 500_000 || bout != 250_000 {
		t.Errorf("bitrates %d/%d, want 500000/250000", bin, bout)
	}
	if a, b := m.bitrates("nope"); a != 0 || b != 0 {
		t.Error("bitrate of an unknown mid")
	}
}
