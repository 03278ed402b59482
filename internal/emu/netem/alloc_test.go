//go:build !race

// The race detector's instrumentation allocates, so allocation counts are
// only meaningful without it.

package netem

import (
	"io"
	"testing"
	"time"

	"github.com/strata-rtc/strata/internal/sim"
)

// nopDev is a Device that takes writes and never yields a packet.
type nopDev struct{}

func (nopDev) Read([]byte) (int, error)    { return 0, io.EOF }
func (nopDev) Write(b []byte) (int, error) { return len(b), nil }
func (nopDev) Close() error                { return nil }

// TestLinkAllocatesNothingPerPacket: admitting, marking, queueing and
// delivering a packet allocates nothing once the link's buffers have grown.
func TestLinkAllocatesNothingPerPacket(t *testing.T) {
	l, err := New(nopDev{}, Config{Link: sim.LinkConfig{Name: "l", Rate: sim.ConstantRate(1e9),
		ECN: sim.Limit{Unit: sim.LimitPackets, Value: 0}}, Duration: time.Second, Observer: &recorder{admitted: make([]sim.Admission, 0, 5000)}})
	if err != nil {
		t.Fatal(err)
	}
	l.t0 = time.Now() // the clock Start would set, without its threads: this test drives the link
	pkt := ipv4Packet(0x02, 64, make([]byte, 1000))
	cycle := func() {
		l.admit(pkt)
		l.admit(pkt)
		for range 2 {
			p, _ := l.head()
			l.deliver(p)
		}
	}
	cycle()
	if n := testing.AllocsPerRun(1000, cycle); n != 0 {
		t.Fatalf("%v allocations per two packets", n)
	}
	if l.Stats().Marks == 0 {
		t.Fatal("packets offered faster than 1 Gbit/s drains them build a queue above the ECN limit: some should be marked")
	}
}
