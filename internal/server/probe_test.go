package server

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/probe"
)

// TestBadInputBattery sends the probe battery (several hundred malformed requests: bad JSON, wrong
// types, huge ids, unknown verbs, bad SDP, bad paths) over both transports to a whole server with
// the real plugins: every request is answered, and the server serves after.
func TestBadInputBattery(t *testing.T) {
	s := startServer(t, testConfig(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for name, run := range map[string]func() probe.BatteryResult{
		"http": func() probe.BatteryResult {
			return probe.BatteryHTTP(ctx, "http://"+s.HTTPAddr()+"/janus", "janus.plugin.echotest")
		},
		"websocket": func() probe.BatteryResult {
			return probe.BatteryWS(ctx, "ws://"+s.WSAddr()+"/", "janus.plugin.echotest")
		},
	} {
		r := run()
		if !r.OK() || r.Sent < 500 {
			t.Errorf("%s: %d sent, %d answered, still serves %v: %v", name, r.Sent, r.Answered, r.StillServes, r.Failures)
		} else {
			t.Logf("%s: %d of %d answered", name, r.Answered, r.Sent)
		}
	}
}

// TestSessionCyclesLeaveNothing creates and destroys 1,000 sessions, each with a handle on the
// echotest: afterwards the server runs as many goroutines as before (within a small margin for
// timers and idle HTTP connections that close on their own).
func TestSessionCyclesLeaveNothing(t *testing.T) {
	s := startServer(t, testConfig(t))
	base := "http://" + s.HTTPAddr() + "/janus"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	probe.SessionCycles(ctx, base, "janus.plugin.echotest", 50, 4) // warm up pools and connections
	before := settledGoroutines()
	r := probe.SessionCycles(ctx, base, "janus.plugin.echotest", 1000, 4)
	if r.Cycles != 1000 || r.Failed != 0 {
		t.Fatalf("%d cycles, %d failed: %s", r.Cycles, r.Failed, r.Err)
	}
	if n := s.Gateway().SessionCount(); n != 0 {
		t.Errorf("%d sessions left", n)
	}
	if after := settledGoroutines(); after > before+5 {
		t.Errorf("goroutines: %d before, %d after 1,000 cycles", before, after)
	}
}

// settledGoroutines is the goroutine count once it stops falling (exiting goroutines finish).
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 50 {
		time.Sleep(50 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m >= n {
			return m
		}
		n = m
	}
	return n
}

// TestWebSocketBurstAnswered sends 10,000 requests on one socket as fast as they can be written,
// reading all the while: every one gets its reply (issue 12: replies must never be dropped).
func TestWebSocketBurstAnswered(t *testing.T) {
	s := startServer(t, testConfig(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := probe.WSBurst(ctx, "ws://"+s.WSAddr()+"/", "janus.plugin.echotest", 10000, 10*time.Second)
	if err != nil || r.Sent != 10000 || r.Answered != 10000 {
		t.Fatalf("%d sent, %d answered: %v", r.Sent, r.Answered, err)
	}
}
